/**
 * SPEC §21 on large tenants (issue 43's performance questions), through the real app:
 *
 * 1. The backfill of matching keys after the upgrade, over every lead of the database
 *    (1,000,000 on PostgreSQL): rows per second, and the longest a concurrent lead write waits
 *    meanwhile (one every 5 ms on its own connection).
 * 2. `GET /leads/duplicates` on a tenant of 100,000 leads (a tenth of them sharing an e-mail with
 *    another, a twentieth a phone): the first page and a page 20 pages deep, and
 *    `GET /leads/:id/duplicates`, p50 and p99 of 30.
 * 3. `POST /leads/merge` of 30 of those groups (each into its first lead) and `POST /merges/:id/undo`
 *    of each: p50 and p99.
 *
 *   FUNIL_BENCH_DATABASE_URL=postgres://… npx tsx bench/duplicates.ts [--rows N] [--backend embedded|postgres] [--results DIR]
 *   Without a PostgreSQL URL (or with --backend embedded) it runs on PGlite with 100,000 leads in
 *   all. Each run replaces its backend's section of DIR/duplicates.md and keeps the others.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { MatchKeyBackfill } from '../src/records/match-key-backfill.js';
import { MatchKeyRules } from '../src/records/match-key-rules.js';
import { benchBackend, onScratch, replaceSection } from './backend-sections.js';
import { benchApp, createTenant, type ScratchDatabase, seedLeads, silent } from './bench-database.js';
import { steadyWriter, WRITE_EVERY_MS } from './steady-writer.js';

const API = '/api/external/v1';
const TENANT_ROWS = 100_000;
const REPETITIONS = 30;

const { values: options } = parseArgs({
  options: {
    rows: { type: 'string' },
    backend: { type: 'string' },
    results: { type: 'string', default: 'bench/results' },
  },
});

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function run(scratch: ScratchDatabase, backend: string, rows: number): Promise<string> {
  const { database, bulk } = scratch;
  const measured = await createTenant(database, 'Measured');
  const rest = await createTenant(database, 'The rest');
  await seedLeads(bulk, measured, TENANT_ROWS);
  // A tenth share an e-mail with the lead before them, a twentieth a phone.
  await sql`
    update leads set email = 'dup' || (g.n / 2) || '@example.com'
    from (select id, row_number() over (order by id) as n from leads where tenant_id = ${measured.id}) as g
    where leads.id = g.id and g.n % 10 < 2`.execute(bulk);
  await sql`
    update leads set phone = '(11) 98765-' || lpad(((g.n / 2) % 10000)::text, 4, '0')
    from (select id, row_number() over (order by id) as n from leads where tenant_id = ${measured.id}) as g
    where leads.id = g.id and g.n % 20 < 2`.execute(bulk);
  for (let from = 1; from <= rows - TENANT_ROWS; from += 100_000) {
    await seedLeads(bulk, rest, Math.min(100_000, rows - TENANT_ROWS - from + 1), from);
  }
  // As after the upgrade: no keys yet, a backfill to do.
  await sql`update leads set match_email = null, match_phone = null`.execute(bulk);
  await sql`delete from match_key_backfills`.execute(bulk);
  await sql`insert into match_key_backfills (table_name) values ('leads')`.execute(bulk);
  await sql`vacuum analyze leads`.execute(bulk);
  const { rows: sample } = await sql<{ id: string }>`select id from leads order by random() limit 1000`.execute(bulk);
  let next = 0;
  const writer = steadyWriter(bulk, () => (sample[next++ % sample.length] as { id: string }).id);
  const backfillStarted = performance.now();
  await new MatchKeyBackfill(database.db, silent, new MatchKeyRules()).resumeAll();
  const backfillMs = performance.now() - backfillStarted;
  const duringBackfill = await writer.stop();
  await sql`analyze leads`.execute(bulk);

  const app = await benchApp(database);
  const send = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const started = performance.now();
    const res = await app.inject({
      method,
      url: `${API}${url}`,
      headers: { authorization: `Bearer ${measured.token}` },
      ...(payload && { payload }),
    });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return { ms: performance.now() - started, res };
  };
  const get = (url: string) => send('GET', url);
  let deepCursor = '';
  {
    let url = '/leads/duplicates?limit=100';
    for (let page = 0; page < 20; page++) {
      const { res } = await get(url);
      const cursor = res.headers['x-next-cursor'];
      if (!cursor) break;
      deepCursor = encodeURIComponent(String(cursor));
      url = `/leads/duplicates?limit=100&cursor=${deepCursor}`;
    }
  }
  const groups = (await get('/leads/duplicates?limit=100')).res.json();
  const someone = groups[0].ids[0];
  const times = { first: [] as number[], deep: [] as number[], one: [] as number[] };
  for (let i = 0; i < REPETITIONS; i++) {
    times.first.push((await get('/leads/duplicates?limit=100')).ms);
    times.deep.push((await get(`/leads/duplicates?limit=100&cursor=${deepCursor}`)).ms);
    times.one.push((await get(`/leads/${someone}/duplicates`)).ms);
  }
  const merges = { merge: [] as number[], undo: [] as number[] };
  for (const group of (groups as { ids: string[] }[]).slice(0, REPETITIONS)) {
    const [targetId, ...sourceIds] = group.ids;
    const merged = await send('POST', '/leads/merge', { targetId, sourceIds });
    merges.merge.push(merged.ms);
    merges.undo.push((await send('POST', `/merges/${merged.res.json().merge.id}/undo`)).ms);
  }
  await app.close();
  const line = (what: string, values: number[]) =>
    `| ${what} | ${percentile(values, 50).toFixed(1)} ms | ${percentile(values, 99).toFixed(1)} ms |`;
  return [
    `### ${backend}: ${rows.toLocaleString('en')} leads`,
    '',
    '| measure | value |',
    '|---|---|',
    `| backfill of matching keys, ${rows.toLocaleString('en')} leads | ${(backfillMs / 1000).toFixed(1)} s (${Math.round(rows / (backfillMs / 1000)).toLocaleString('en')} rows/s) |`,
    `| longest concurrent lead write during it (${duringBackfill.writes} writes, one every ${WRITE_EVERY_MS} ms) | ${duringBackfill.longest.toFixed(1)} ms |`,
    '',
    `On the tenant of ${TENANT_ROWS.toLocaleString('en')} leads (${groups.length === 100 ? 'pages of 100 groups' : `${groups.length} groups`}), ${REPETITIONS} times each:`,
    '',
    '| request | p50 | p99 |',
    '|---|---|---|',
    line('`GET /leads/duplicates?limit=100` (first page)', times.first),
    line('the same, 20 pages deep', times.deep),
    line('`GET /leads/:id/duplicates`', times.one),
    line(`\`POST /leads/merge\` of a group (${merges.merge.length} groups)`, merges.merge),
    line('`POST /merges/:id/undo` of each', merges.undo),
    '',
  ].join('\n');
}

const backend = benchBackend(options.backend);
const rows = Number(options.rows ?? (backend.url ? 1_000_000 : TENANT_ROWS));
const section = await onScratch(backend, 'benchdup', (scratch) => run(scratch, backend.name, rows));
await replaceSection(
  join(options.results as string, 'duplicates.md'),
  [
    '# Duplicates on large tenants (SPEC §21)',
    '',
    '`npx tsx bench/duplicates.ts [--backend embedded|postgres]`; each run replaces its own section.',
  ],
  `${section.trimEnd()}\n\nRun ${new Date().toISOString()}.`,
);
process.stdout.write(section);
