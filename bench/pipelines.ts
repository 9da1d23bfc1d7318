/**
 * SPEC §20 on a large tenant (issue 42's performance questions), through the real app:
 *
 * 1. The migration that brings pipelines, on a database at the schema before it holding one
 *    tenant of 1,000,000 leads: how long it takes, and the longest a concurrent lead write waits
 *    meanwhile (one write every 5 ms on its own connection: what its locks cost writers).
 * 2. Removing a stage that holds 100,000 of those leads with `?moveTo=`: leads moved per second
 *    (each with its event), and the longest a concurrent write of a lead being moved waits (one
 *    every 5 ms; each batch of the move is its own transaction, so this is the longest lock).
 *
 *   FUNIL_BENCH_DATABASE_URL=postgres://… npx tsx bench/pipelines.ts [--rows N] [--moved N] [--backend embedded|postgres] [--results DIR]
 *   Without a PostgreSQL URL (or with --backend embedded) it runs on PGlite with 100,000 leads and
 *   10,000 moved. Each run replaces its backend's section of DIR/pipelines.md and keeps the others.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { issueToken } from '../src/admin/issue-token.js';
import { SCOPES } from '../src/auth/scopes.js';
import { TokenRepository } from '../src/auth/token.repository.js';
import { migrateTo, migrateToLatest } from '../src/db/migrate.js';
import { benchBackend, onScratch, replaceSection } from './backend-sections.js';
import { benchApp, type ScratchDatabase, seedLeads } from './bench-database.js';
import { steadyWriter, WRITE_EVERY_MS } from './steady-writer.js';

const API = '/api/external/v1';

const { values: options } = parseArgs({
  options: {
    rows: { type: 'string' },
    moved: { type: 'string' },
    backend: { type: 'string' },
    results: { type: 'string', default: 'bench/results' },
  },
});

async function run(scratch: ScratchDatabase, backend: string, rows: number, moved: number): Promise<string> {
  const { database, bulk } = scratch;
  // Back to the schema before pipelines, then a tenant and its leads as they were.
  await migrateTo(database.db, '2026-11-27T1300-lead-customer-index');
  // As the schema of the time has it (TenantRepository reads columns added since).
  const created = { id: randomUUID() };
  await sql`insert into tenants (id, name) values (${created.id}, 'Large')`.execute(database.db);
  const before = await issueToken(new TokenRepository(database.db), {
    tenantId: created.id,
    name: 'before pipelines',
    scopes: SCOPES.filter((scope) => scope !== 'pipelines:write'),
    expiresAt: null,
  });
  const tenant = { id: created.id, tokenId: before.id, token: before.token };
  for (let from = 1; from <= rows; from += 100_000) {
    await seedLeads(bulk, tenant, Math.min(100_000, rows - from + 1), from);
  }
  await sql`analyze leads`.execute(bulk);
  const { rows: sample } = await sql<{ id: string }>`
    select id from leads where tenant_id = ${tenant.id} order by random() limit 1000`.execute(bulk);
  let next = 0;
  const anyLead = () => (sample[next++ % sample.length] as { id: string }).id;

  const writer = steadyWriter(bulk, anyLead);
  const migrationStarted = performance.now();
  await migrateToLatest(database.db);
  const migrationMs = performance.now() - migrationStarted;
  const duringMigration = await writer.stop();

  tenant.token = (
    await issueToken(new TokenRepository(database.db), {
      tenantId: tenant.id,
      name: 'all',
      scopes: SCOPES,
      expiresAt: null,
    })
  ).token;
  const app: FastifyInstance = await benchApp(database);
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url: `${API}${url}`,
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const stages = [
    { key: 'kept', label: 'Kept', kind: 'open' },
    { key: 'removed', label: 'Removed', kind: 'open' },
  ];
  const pipeline = await call('POST', '/pipelines', { name: 'Bench', stages });
  // `moved` of the leads into the stage to be removed (set-based: this is the setting, not the measure).
  await sql`
    update leads set pipeline_id = ${pipeline.id}::uuid, status = 'removed'
    where id in (select id from leads where tenant_id = ${tenant.id} order by id limit ${moved})`.execute(bulk);
  const { rows: movedSample } = await sql<{ id: string }>`
    select id from leads where tenant_id = ${tenant.id} and status = 'removed' order by random() limit 1000`.execute(
    bulk,
  );
  let nextMoved = 0;
  const movingLead = () => (movedSample[nextMoved++ % movedSample.length] as { id: string }).id;

  const moveWriter = steadyWriter(bulk, movingLead);
  const moveStarted = performance.now();
  await call('PUT', `/pipelines/${pipeline.id}?moveTo=kept`, { stages: stages.slice(0, 1) });
  const answeredMs = performance.now() - moveStarted;
  for (;;) {
    const { rows: left } = await sql<{ n: number }>`
      select count(*)::int as n from leads where tenant_id = ${tenant.id} and status = 'removed'`.execute(bulk);
    if (left[0]?.n === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const moveMs = performance.now() - moveStarted;
  const duringMove = await moveWriter.stop();
  const { rows: events } = await sql<{ n: number }>`
    select count(*)::int as n from events where tenant_id = ${tenant.id} and type = 'lead.status_changed'`.execute(
    bulk,
  );
  await app.close();

  const perSecond = Math.round(moved / (moveMs / 1000));
  return [
    `### ${backend}: ${rows.toLocaleString('en')} leads, ${moved.toLocaleString('en')} moved`,
    '',
    '| measure | value |',
    '|---|---|',
    `| migration to pipelines (1 tenant, ${rows.toLocaleString('en')} leads) | ${migrationMs.toFixed(0)} ms |`,
    `| longest concurrent lead write during it (${duringMigration.writes} writes, one every ${WRITE_EVERY_MS} ms) | ${duringMigration.longest.toFixed(1)} ms |`,
    `| \`PUT /pipelines/:id?moveTo=\` answered after | ${answeredMs.toFixed(0)} ms |`,
    `| every lead moved after | ${moveMs.toFixed(0)} ms |`,
    `| leads moved per second (each with its event) | ${perSecond.toLocaleString('en')} |`,
    `| \`lead.status_changed\` events written | ${events[0]?.n.toLocaleString('en')} |`,
    `| longest concurrent write of a lead being moved (${duringMove.writes} writes) | ${duringMove.longest.toFixed(1)} ms |`,
    '',
  ].join('\n');
}

const backend = benchBackend(options.backend);
const rows = Number(options.rows ?? (backend.url ? 1_000_000 : 100_000));
const moved = Number(options.moved ?? (backend.url ? 100_000 : 10_000));
const section = await onScratch(backend, 'benchpipe', (scratch) => run(scratch, backend.name, rows, moved));
await replaceSection(
  join(options.results as string, 'pipelines.md'),
  [
    '# Pipelines on a large tenant (SPEC §20)',
    '',
    '`npx tsx bench/pipelines.ts [--backend embedded|postgres]`; each run replaces its own section.',
  ],
  `${section.trimEnd()}\n\nRun ${new Date().toISOString()}.`,
);
