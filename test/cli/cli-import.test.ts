import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tenantWithToken } from '../helpers/admin-api.js';
import { type Json, tenantCli } from './tenant-cli.js';

const ONE_LINE = /^funil: [^\n]+\n$/;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

describe('funil import: a file into a tenant, with its progress, summary and errors (SPEC §23)', () => {
  const cli = tenantCli('import', 'Importadora');
  const { funil, api } = cli;
  async function file(name: string, text: string): Promise<string> {
    const path = join(cli.tempDir, name);
    await writeFile(path, text);
    return path;
  }
  const leadsFrom = async (source: string): Promise<Json[]> => api(`/leads?source=${source}&sort=createdAt`);

  let importId: string;

  it('imports a CSV with one bad row: plain progress lines off a terminal, the summary, the refused row, exit 0', async () => {
    const csv = await file(
      'leads.csv',
      'name,email,source\nAna Souza,ana@cli.example,cli\nBruno,not-an-email,cli\nCaio Lima,caio@cli.example,cli\n',
    );
    const result = await funil(['import', csv, '--resource', 'lead']);
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0, 'an import that ran to its end, even with a refused row');
    const lines = result.stdout.split('\n');
    // Not a terminal: no \r redraws, no escape codes; a line per step, ending on its last.
    assert.ok(!result.stdout.includes('\r') && !result.stdout.includes('\u001b'), result.stdout);
    assert.equal(lines[0], 'uploading: 102 B of 102 B (100%)');
    const progress = lines.filter((line) => /^(queued|running|succeeded): /.test(line));
    assert.ok(progress.length >= 1, result.stdout);
    assert.equal(progress.at(-1), 'succeeded: 3 of 3 rows (100%)');
    const summary = new RegExp(`\\nImport (${UUID}) succeeded: 3 of 3 rows in \\d+\\.\\d s\\.\\n`).exec(result.stdout);
    assert.ok(summary?.[1], result.stdout);
    importId = summary[1];
    assert.match(result.stdout, /\n {2}created {2}2\n {2}updated {2}0\n {2}failed {3}1\n/);
    assert.match(
      result.stdout,
      /\nRows refused \(1\):\nROW +FIELD +MESSAGE\n2 +email +Field 'email': must be a valid e-mail address\.\n/,
    );
    assert.ok(result.stdout.endsWith(`\nSee them all: funil imports errors ${importId}\n`));
    assert.deepEqual(
      (await leadsFrom('cli')).map((lead: Json) => lead.name),
      ['Ana Souza', 'Caio Lima'],
    );
  });

  it('shows an import, all its errors (for people and as one JSON array), and reverts it', async () => {
    const status = await funil(['imports', 'status', importId]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /\n {2}status +succeeded\n {2}rows +3 of 3 done\n/);
    const json = JSON.parse((await funil(['imports', 'status', importId, '--json'])).stdout);
    assert.deepEqual(json, await api(`/imports/${importId}`));

    const errors = await funil(['imports', 'errors', importId]);
    assert.equal(errors.stdout, "ROW  FIELD  MESSAGE\n2    email  Field 'email': must be a valid e-mail address.\n");
    const errorsJson = JSON.parse((await funil(['imports', 'errors', importId, '--json'])).stdout);
    assert.deepEqual(
      errorsJson.map((error: Json) => [error.row, error.field, error.code]),
      [[2, 'email', 'validation_failed']],
    );

    const reverted = await funil(['imports', 'revert', importId]);
    assert.equal(reverted.code, 0, reverted.stderr);
    assert.match(reverted.stdout, new RegExp(`Reverted import ${importId}: 2 deleted, 0 restored, 0 skipped\\.\\n$`));
    assert.deepEqual(await leadsFrom('cli'), []);
    assert.equal((await funil(['imports', 'errors', importId, '--phase', 'revert', '--json'])).stdout, '[]\n');
    const again = await funil(['imports', 'revert', importId]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^funil: .*\(conflict\)\n$/);
  });

  it('--json prints only the final import; a dry run writes nothing; NDJSON by its extension', async () => {
    const ndjson = await file(
      'customers.ndjson',
      `${JSON.stringify({ name: 'Dora', email: 'dora@cli.example' })}\n${JSON.stringify({ name: 'Eli' })}\n`,
    );
    const result = await funil(['import', ndjson, '--resource', 'customer', '--dry-run', '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '', 'no progress lines off a terminal with --json');
    const state = JSON.parse(result.stdout);
    assert.deepEqual(
      [state.resource, state.format, state.dryRun, state.status, state.total, state.created, state.failed],
      ['customer', 'ndjson', true, 'succeeded', 2, 1, 1],
    );
    assert.deepEqual(await api('/customers'), [], 'a dry run writes nothing');
    const human = await funil(['import', ndjson, '--resource', 'customer', '--dry-run']);
    assert.match(
      human.stdout,
      /\nDry run \S+ succeeded: 2 of 2 rows.*\nNothing was written.*\n {2}would create {2}1\n/,
    );
  });

  it('--no-wait returns once the file is stored, with the id to follow', async () => {
    const csv = await file('later.csv', 'name,email,source\nFabi,fabi@cli.example,later\n');
    const result = await funil(['import', csv, '--resource', 'lead', '--no-wait', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const accepted = JSON.parse(result.stdout);
    assert.deepEqual(Object.keys(accepted).sort(), ['id', 'status']);
    assert.match(accepted.id, new RegExp(`^${UUID}$`));
  });

  it('an upsert with a token that may not read leads is refused (403) with the message naming the scope', async () => {
    const writeOnly = (await tenantWithToken(cli.server, 'Sem leitura', ['leads:write'])).token;
    const csv = await file('upsert.csv', 'name,email\nGil,gil@cli.example\n');
    const result = await funil(['import', csv, '--resource', 'lead', '--upsert', 'email'], { FUNIL_TOKEN: writeOnly });
    assert.equal(result.code, 1);
    assert.equal(result.stderr, 'funil: The token lacks the required scope: leads:read. (forbidden)\n');
  });

  it('says clearly what is wrong with the file, the token or the usage, before any request', async () => {
    const csv = await file('ok.csv', 'name,email\nH,h@cli.example\n');
    const unreachable = { FUNIL_URL: 'http://127.0.0.1:9' };
    const cases: [string[], Record<string, string>, RegExp][] = [
      [
        ['import', join(cli.tempDir, 'missing.csv'), '--resource', 'lead'],
        unreachable,
        /cannot read \S+missing\.csv: no such file/,
      ],
      [['import', cli.tempDir, '--resource', 'lead', '--format', 'csv'], unreachable, /cannot import \S+: not a file/],
      [
        ['import', await file('leads.txt', 'x'), '--resource', 'lead'],
        unreachable,
        /pass --format csv or --format ndjson/,
      ],
      [
        ['import', csv, '--resource', 'lead'],
        { ...unreachable, FUNIL_TOKEN: '' },
        /no tenant token: set FUNIL_TOKEN or pass --token/,
      ],
      [['import', csv], unreachable, /required option '--resource <resource>' not specified/],
      [['import', csv, '--resource', 'deal'], unreachable, /'deal' is invalid/],
    ];
    for (const [args, env, message] of cases) {
      const result = await funil(args, env);
      assert.equal(result.code, 1, args.join(' '));
      assert.match(result.stderr, ONE_LINE);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    }
  });

  it('Ctrl-C while it runs cancels the import on the server and says so, exit 130', async () => {
    const rows = Array.from({ length: 30_000 }, (_, index) => `Row ${index},row${index}@big.example,big`);
    const csv = await file('big.csv', `name,email,source\n${rows.join('\n')}\n`);
    const { code, stdout, stderr } = await cli.interrupt(
      ['import', csv, '--resource', 'lead'],
      'stdout',
      /^(queued|running): /m,
    );
    assert.equal(code, 130, stderr);
    const id = new RegExp(`cancelling import (${UUID}) on the server`).exec(stderr)?.[1];
    assert.ok(id, stderr);
    assert.match(stderr, /\nfunil: interrupted: import \S+ cancelled/);
    assert.match(stdout, new RegExp(`\\nImport ${id} cancelled: `));
    const state = await api(`/imports/${id}`);
    assert.equal(state.status, 'cancelled');
    assert.ok(state.processed < 30_000);
  });
});
