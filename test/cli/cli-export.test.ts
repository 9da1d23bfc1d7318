import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { tenantWithToken } from '../helpers/admin-api.js';
import { type Json, tenantCli } from './tenant-cli.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** A CSV cell as the export writes it (RFC 4180; none of these begins with a formula character). */
const cell = (value: unknown) => {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

describe('funil export: a file of leads or customers, to stdout or --output, with its progress on stderr (SPEC §23)', () => {
  const cli = tenantCli('export', 'Exportadora');
  const { funil, api } = cli;
  const post = (path: string, body: unknown) => api(path, { method: 'POST', body: JSON.stringify(body) });
  const outputs = async () => (await readdir(cli.tempDir)).filter((name) => name !== 'package').sort();

  before(async () => {
    const leads: [string, string, string][] = [
      ['Ana Souza', 'ana@export.example', 'new'],
      ['Bruno, "o Bruno"', 'bruno@export.example', 'contacted'],
      ['Caio Lima', 'caio@export.example', 'won'],
      ['Dora Reis', 'dora@export.example', 'new'],
    ];
    for (const [name, email, status] of leads) await post('/leads', { name, email, status, source: 'export' });
    await post('/customers', { name: 'Eli Costa', email: 'eli@export.example' });
  });

  it('writes leads as CSV to stdout, as the list has them; plain progress lines and a closing line on stderr', async () => {
    const result = await funil([
      'export',
      '--resource',
      'lead',
      '--format',
      'csv',
      '--query',
      'sort=createdAt',
      '--fields',
      'name,email,status',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const list: Json[] = await api('/leads?sort=createdAt');
    const rows = list.map((lead) => [lead.name, lead.email, lead.status].map(cell).join(','));
    assert.equal(result.stdout, ['name,email,status', ...rows, ''].join('\r\n'));

    // Not a terminal: no \r redraws, no escape codes; the export's steps, the download, the closing line.
    assert.ok(!result.stderr.includes('\r') && !result.stderr.includes('\u001b'), result.stderr);
    const lines = result.stderr.trimEnd().split('\n');
    const bytes = Buffer.byteLength(result.stdout);
    assert.ok(
      lines.slice(0, -3).every((line) => /^(queued|running): \d+ rows?/.test(line)),
      result.stderr,
    );
    assert.deepEqual(lines.slice(-3), [
      'succeeded: 4 of 4 rows (100%)',
      `downloading: ${bytes} B of ${bytes} B (100%)`,
      `Exported 4 leads (${bytes.toLocaleString('en-US')} bytes).`,
    ]);
  });

  it('writes every field to --output, complete, through a temp file that is renamed (none left behind)', async () => {
    const file = join(cli.tempDir, 'leads.csv');
    const result = await funil(['export', '--resource', 'lead', '--output', file, '--query', 'sort=createdAt']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '', 'the file goes to --output, the closing line to stderr');
    assert.match(result.stderr, new RegExp(`\\nExported 4 leads \\([\\d,]+ bytes\\) to ${file}\\.\\n$`));
    const text = await readFile(file, 'utf8');
    const [header, ...rows] = text.trimEnd().split('\r\n');
    assert.match(header ?? '', /^_id,name,email,phone,/);
    const ids = rows.map((row) => row.split(',')[0]);
    assert.deepEqual(
      ids,
      (await api('/leads?sort=createdAt')).map((lead: Json) => lead._id),
    );
    assert.deepEqual(await outputs(), ['leads.csv']);
  });

  it('NDJSON (by the extension of --output): the full objects; --json prints the final export on stdout', async () => {
    const file = join(cli.tempDir, 'customers.ndjson');
    const result = await funil(['export', '--resource', 'customer', '--output', file, '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '', 'no progress lines off a terminal with --json');
    const state = JSON.parse(result.stdout);
    assert.match(state.id, new RegExp(`^${UUID}$`));
    assert.deepEqual(
      [state.resource, state.format, state.status, state.total, state.processed],
      ['customer', 'ndjson', 'succeeded', 1, 1],
    );
    assert.deepEqual(state, await api(`/exports/${state.id}`));
    const lines = (await readFile(file, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const [customer] = await api('/customers');
    assert.deepEqual(lines, [await api(`/customers/${customer._id}`)]);
  });

  it('--query filters as the list does: a name given twice is one comma-separated value', async () => {
    const result = await funil([
      'export',
      '--resource',
      'lead',
      '--format',
      'ndjson',
      '--query',
      'status=new&status=won&sort=-createdAt',
      '--fields',
      '_id,status',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const exported = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const listed: Json[] = await api('/leads?status=new,won&sort=-createdAt');
    assert.equal(listed.length, 3);
    assert.deepEqual(
      exported,
      listed.map((lead) => ({ _id: lead._id, status: lead.status })),
    );
  });

  it('a token without leads:read: the 403 in one line on stderr, exit 1, nothing on stdout, no file', async () => {
    const customersOnly = (await tenantWithToken(cli.server, 'Só clientes', ['customers:read'])).token;
    for (const output of [[], ['--output', join(cli.tempDir, 'refused.csv')]]) {
      const result = await funil(['export', '--resource', 'lead', ...output], { FUNIL_TOKEN: customersOnly });
      assert.equal(result.code, 1);
      assert.equal(result.stderr, 'funil: The token lacks the required scope: leads:read. (forbidden)\n');
      assert.equal(result.stdout, '');
    }
    assert.ok(!(await outputs()).some((name) => name.includes('refused')));
  });

  it('a bad filter or usage: one line naming what is wrong, exit 1, nothing on stdout', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['export', '--resource', 'lead', '--query', 'status=nope'],
        /^funil: Field 'status': must be one of: new, .*\(validation_failed, field query\.status\)\n$/,
      ],
      [['export', '--resource', 'lead', '--query', 'limit=5'], /query\.limit/],
      [['export', '--resource', 'lead', '--fields', 'name,shoeSize'], /fields\.1/],
      [['export', '--resource', 'lead', '--json'], /--json prints the export on stdout: pass --output FILE/],
      [['export', '--resource', 'lead', '--fields', ' , '], /--fields names no field/],
      [['export', '--resource', 'deal'], /'deal' is invalid/],
      [
        ['export', '--resource', 'lead', '--output', join(cli.tempDir, 'no', 'such', 'dir.csv')],
        /cannot write .*ENOENT/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await funil(args);
      assert.equal(result.code, 1, args.join(' '));
      assert.match(result.stderr, /^funil: [^\n]+\n$/);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '', args.join(' '));
    }
  });

  it('Ctrl-C while the export runs: exit 130, a line saying so, and no file at --output', async () => {
    const rows = Array.from({ length: 5_000 }, (_, index) => `Row ${index},row${index}@big.example,big`);
    const accepted = await api('/imports?resource=lead', {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: `name,email,source\n${rows.join('\n')}\n`,
    });
    while ((await api(`/imports/${accepted.id}`)).status !== 'succeeded') await sleep(200);

    const file = join(cli.tempDir, 'big.csv');
    const { code, stdout, stderr } = await cli.interrupt(
      ['export', '--resource', 'lead', '--output', file],
      'stderr',
      /^(queued|running): /m,
    );
    assert.equal(code, 130, stderr);
    assert.match(
      stderr,
      new RegExp(`\\nfunil: interrupted: export ${UUID} goes on on the server; \\S+ was not written\\n$`),
    );
    assert.equal(stdout, '');
    assert.ok(!(await outputs()).some((name) => name.includes('big.csv')), String(await outputs()));
  });
});
