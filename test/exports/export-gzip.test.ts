import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { before, it } from 'node:test';
import { promisify } from 'node:util';
import { inflateRawSync } from 'node:zlib';
import { sql } from 'kysely';
import pino from 'pino';
import { exportRepository } from '../../src/exports/export.repository.js';
import { ExportRuns } from '../../src/exports/export-runs.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { uniqueEmail } from '../helpers/unique.js';
import { csvObjects, fileOf, queuedExport } from './export-fixtures.js';

const run = promisify(execFile);

/** Rows per page and so per stored chunk: small, so that a few leads make a file of several chunks. */
const PAGE_ROWS = 4;
const LEADS = 25;

/**
 * A gzip body read the way curl and a single zlib inflate read it: its first member only. Fails
 * unless that member is the whole body (its 8-byte trailer the body's last bytes).
 */
function singleMember(body: Buffer): string {
  assert.deepEqual([...body.subarray(0, 3)], [0x1f, 0x8b, 8], 'a gzip header, deflate');
  assert.equal(body[3], 0, 'no optional header fields: the header is 10 bytes');
  const { buffer, engine } = inflateRawSync(body.subarray(10), { info: true }) as unknown as {
    buffer: Buffer;
    engine: { bytesWritten: number };
  };
  const after = body.length - (10 + engine.bytesWritten + 8);
  assert.equal(after, 0, `${after} bytes (more gzip members) after the first member`);
  assert.equal(body.readUInt32LE(body.length - 4), buffer.length % 2 ** 32, 'ISIZE: the whole file');
  return buffer.toString('utf8');
}

describeEachBackend('an export file gzipped is one gzip stream (SPEC §23)', (ctx) => {
  let tenant: TestTenant;
  let id: string;
  let plain: string;

  before(async () => {
    tenant = await ctx.tenant();
    for (let i = 0; i < LEADS; i++) {
      const name = `Lead ${String(i).padStart(2, '0')}`;
      const res = await ctx.api(tenant, 'POST', '/leads', { body: { name, email: uniqueEmail('gz'), score: i } });
      assert.equal(res.status, 201, res.text);
    }
    const created = await queuedExport(ctx, tenant, 'csv', ['score', '_id', 'name', 'score']);
    id = created.id;
    const { exportResources, catalog } = ctx.services();
    const runs = new ExportRuns(ctx.database, exportResources, catalog, pino({ level: 'silent' }), PAGE_ROWS);
    await runs.start(tenant.id, id);
    await runs.stop();
    assert.equal((await exportRepository.find(ctx.db, tenant.id, id))?.status, 'succeeded');
    const { rows } = await sql`select seq from export_chunks where export_id = ${id}`.execute(ctx.db);
    assert.equal(rows.length, Math.ceil(LEADS / PAGE_ROWS), 'the file is stored in several chunks');
    const file = await fileOf(ctx, tenant.token, id);
    assert.equal(file.headers['content-encoding'], undefined);
    plain = file.text;
    assert.equal(csvObjects(plain).length, LEADS);
  });

  it('with Accept-Encoding: gzip the body is ONE gzip member holding every row', async () => {
    const file = await fileOf(ctx, tenant.token, id, true);
    assert.equal(file.status, 200);
    assert.equal(file.headers['content-encoding'], 'gzip');
    assert.equal(file.headers.vary, 'accept-encoding');
    const length = file.headers['content-length'];
    assert.ok(length === undefined || Number(length) === file.raw.length, 'never a wrong Content-Length');
    const text = singleMember(file.raw);
    assert.equal(text, plain);
    assert.deepEqual(
      csvObjects(text).map((row) => Number(row.score)),
      Array.from({ length: LEADS }, (_, i) => i),
    );
  });

  it('`curl --compressed` (as the README shows) writes the whole file and exits 0', async (t) => {
    // CI installs curl (.ci/run); a machine without it has no README command to break.
    if (spawnSync('curl', ['--version']).error) return t.skip('curl is not installed');
    const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    const { stdout } = await run(
      'curl',
      [
        '-sS',
        '--fail',
        '--compressed',
        `${base}${API}/exports/${id}/file`,
        '-H',
        `Authorization: Bearer ${tenant.token}`,
      ],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
    );
    assert.equal(stdout.toString('utf8'), plain);
  });
});
