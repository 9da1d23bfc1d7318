/**
 * Keyset paging at scale (SPEC §6: "page 1,000 costs the same as page 1"), through the real app.
 *
 * For each backend: one tenant with many leads (1,000,000 on PostgreSQL, 100,000 on PGlite),
 * seeded set-based with generate_series; then, through buildApp + inject, the first page is timed,
 * a client walks up to 5,000 pages of 100 by X-Next-Cursor, and the page at the deepest cursor it
 * reached is timed. Prints the medians and their ratio (target ≤ 1.5), and writes them to
 * bench/results/lists.md (issue 21's figure for page 1,000 of a walk over 1,000,000 leads).
 *
 *   FUNIL_BENCH_DATABASE_URL=postgres://… npm run bench:lists [-- --results <dir>]
 *   (FUNIL_TEST_DATABASE_URL is used when FUNIL_BENCH_DATABASE_URL is not set; without either,
 *   PostgreSQL is skipped and said so.)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import {
  benchApp,
  benchPostgresUrl,
  createTenant,
  median,
  type ScratchDatabase,
  scratchPglite,
  scratchPostgres,
  seedLeads,
} from './bench-database.js';

const LIMIT = 100;
const SEED_CHUNK = 125_000;
const MAX_WALK_PAGES = 5_000;
const REPETITIONS = 50;
const TARGET_RATIO = 1.5;
/** The default sort, and the text sort (collation-ordered, the widest index). */
const SORTS = ['-createdAt', 'name'];
const LEADS_URL = '/api/external/v1/leads';

interface Target {
  label: string;
  rows: number;
  open(): Promise<ScratchDatabase>;
}

const resultsDir = process.argv.includes('--results')
  ? (process.argv[process.argv.indexOf('--results') + 1] as string)
  : 'bench/results';

const targets: Target[] = [];
const postgresUrl = benchPostgresUrl();
if (postgresUrl) {
  targets.push({ label: 'PostgreSQL', rows: 1_000_000, open: () => scratchPostgres(postgresUrl, 'bench') });
} else {
  console.log('PostgreSQL: skipped: set FUNIL_BENCH_DATABASE_URL (or FUNIL_TEST_DATABASE_URL) to benchmark it\n');
}
targets.push({ label: 'PGlite', rows: 100_000, open: scratchPglite });

const started = performance.now();
let failed = false;
const report: string[] = [
  '# Keyset paging at scale (SPEC §6): page 1,000 against page 1',
  '',
  `\`npm run bench:lists\`, ${new Date().toISOString().slice(0, 10)}, through the app (\`inject\`): one tenant, ` +
    `limit=${LIMIT}. A client walks up to ${MAX_WALK_PAGES.toLocaleString('en')} pages by X-Next-Cursor; then the first ` +
    `page and the page at the deepest cursor are timed alternately, medians of ${REPETITIONS}. Target: the deep page ` +
    `within ${TARGET_RATIO}× of the first.`,
  '',
  '| database | leads | sort | pages walked | walk: median of the first / last 100 pages | first page | deepest page | deep ÷ first |',
  '|---|---:|---|---:|---:|---:|---:|---:|',
];
for (const target of targets) {
  const scratch = await target.open();
  try {
    const version = await sql<{ version: string }>`select version()`.execute(scratch.bulk);
    console.log(
      `${target.label} (${version.rows[0]?.version.split(' on ')[0]}): ${target.rows.toLocaleString('en')} leads in one tenant`,
    );
    const tenant = await createTenant(scratch.database, 'Bench');
    const seed = await seedFast(scratch, tenant, target.rows);
    console.log(
      `  seed: ${seconds(seed.total)} (insert ${seconds(seed.insert)}, indexes ${seconds(seed.indexes)}, vacuum analyze ${seconds(seed.analyze)})`,
    );

    const app = await benchApp(scratch.database);
    try {
      for (const sort of SORTS) {
        const result = await measure(app, tenant.token, sort);
        failed = !result.ok || failed;
        report.push(
          `| ${target.label} | ${target.rows.toLocaleString('en')} | \`${sort}\` | ${result.pages.toLocaleString('en')} | ` +
            `${ms(result.head)} / ${ms(result.tail)} | ${ms(result.first)} | page ${(result.pages + 1).toLocaleString('en')}: ` +
            `${ms(result.deep)} | ${(result.deep / result.first).toFixed(2)}× |`,
        );
      }
    } finally {
      // The app owns the database from here: closing it closes the pool, then the scratch is dropped.
      await app.close();
    }
  } finally {
    await scratch.drop();
  }
  console.log('');
}
console.log(`total ${seconds(performance.now() - started)}`);
await mkdir(resultsDir, { recursive: true });
await writeFile(join(resultsDir, 'lists.md'), `${report.join('\n')}\n`);
console.log(`written to ${join(resultsDir, 'lists.md')}`);
process.exitCode = failed ? 1 : 0;

/**
 * Set-based INSERTs with the secondary indexes set aside, then those indexes rebuilt from the
 * catalog's own definitions (the migrated schema, exactly): the usual bulk-load order, many times
 * faster than maintaining the trigram indexes row by row. Foreign-key triggers are skipped when
 * the role may (session_replication_role); the seeded tenant and token exist, so nothing is lost.
 */
async function seedFast(scratch: ScratchDatabase, tenant: Awaited<ReturnType<typeof createTenant>>, rows: number) {
  const { bulk } = scratch;
  const begin = performance.now();
  const indexes = await sql<{ indexname: string; indexdef: string }>`
    select indexname, indexdef from pg_indexes where tablename = 'leads' and indexname <> 'leads_pkey'`.execute(bulk);
  for (const index of indexes.rows) await sql`drop index ${sql.id(index.indexname)}`.execute(bulk);
  // Two sessions share the work (PGlite has one: there they simply take turns).
  const chunks: [number, number][] = [];
  for (let from = 1; from <= rows; from += SEED_CHUNK) chunks.push([from, Math.min(SEED_CHUNK, rows - from + 1)]);
  await inSessions(bulk, async (session) => {
    await sql`set session_replication_role = replica`.execute(session).catch(() => undefined);
    for (let chunk = chunks.shift(); chunk; chunk = chunks.shift())
      await seedLeads(session, tenant, chunk[1], chunk[0]);
    await sql`set session_replication_role = origin`.execute(session).catch(() => undefined);
  });
  const inserted = performance.now();
  const definitions = indexes.rows.map((index) => index.indexdef);
  await inSessions(bulk, async (session) => {
    await sql`set maintenance_work_mem = '256MB'`.execute(session).catch(() => undefined);
    for (let definition = definitions.shift(); definition; definition = definitions.shift()) {
      await sql.raw(definition).execute(session);
    }
  });
  const indexed = performance.now();
  await sql`vacuum analyze leads`.execute(bulk);
  const analyzed = performance.now();
  return {
    insert: inserted - begin,
    indexes: indexed - inserted,
    analyze: analyzed - indexed,
    total: analyzed - begin,
  };
}

/** Runs `work` in two sessions at once, each on a connection of its own. */
async function inSessions(db: Db, work: (session: Db) => Promise<void>): Promise<void> {
  await Promise.all([0, 1].map(() => db.connection().execute((session) => work(session))));
}

async function timedPage(app: FastifyInstance, token: string, query: string) {
  const begin = performance.now();
  const res = await app.inject({
    method: 'GET',
    url: `${LEADS_URL}?${query}`,
    headers: { authorization: `Bearer ${token}` },
  });
  const ms = performance.now() - begin;
  if (res.statusCode !== 200) throw new Error(`GET ${query}: ${res.statusCode} ${res.body}`);
  const cursor = res.headers['x-next-cursor'];
  const rows = (res.json() as unknown[]).length;
  return { ms, rows, bytes: res.rawPayload.length, cursor: typeof cursor === 'string' ? cursor : undefined };
}

/** Times one sort; `ok` when the deep page is within the target ratio of the first. */
async function measure(app: FastifyInstance, token: string, sort: string) {
  const base = `sort=${encodeURIComponent(sort)}&limit=${LIMIT}`;
  for (let i = 0; i < 5; i++) await timedPage(app, token, base); // warm-up: JIT, caches, plans

  const walkStarted = performance.now();
  const pageTimes: number[] = [];
  let deepest: string | undefined;
  let page = await timedPage(app, token, base);
  let rowsSeen = page.rows;
  while (page.cursor && pageTimes.length < MAX_WALK_PAGES) {
    deepest = page.cursor;
    page = await timedPage(app, token, `${base}&cursor=${encodeURIComponent(deepest)}`);
    pageTimes.push(page.ms);
    rowsSeen += page.rows;
  }
  const walkMs = performance.now() - walkStarted;
  if (!deepest) throw new Error('the walk never got a cursor');

  // First and deep pages alternate, so that both see the same machine (other load, caches, GC).
  const firstTimes: number[] = [];
  const deepTimes: number[] = [];
  let firstBytes = 0;
  let deepBytes = 0;
  const deepQuery = `${base}&cursor=${encodeURIComponent(deepest)}`;
  for (let i = 0; i < REPETITIONS; i++) {
    const firstPage = await timedPage(app, token, base);
    const deepPage = await timedPage(app, token, deepQuery);
    firstTimes.push(firstPage.ms);
    deepTimes.push(deepPage.ms);
    firstBytes = firstPage.bytes;
    deepBytes = deepPage.bytes;
  }
  const first = median(firstTimes);
  const deep = median(deepTimes);
  const ratio = deep / first;
  const ok = ratio <= TARGET_RATIO;
  const head = median(pageTimes.slice(0, 100));
  const tail = median(pageTimes.slice(-100));
  console.log(`  sort=${sort}, limit=${LIMIT}`);
  console.log(
    `    walk: ${pageTimes.length.toLocaleString('en')} pages by X-Next-Cursor (${rowsSeen.toLocaleString('en')} rows) in ${seconds(walkMs)}; page median: first 100 ${ms(head)}, last 100 ${ms(tail)}`,
  );
  console.log(
    `    first page:                  median ${ms(first)} over ${REPETITIONS}, alternating with the deep page (${firstBytes} bytes)`,
  );
  console.log(
    `    page ${(pageTimes.length + 1).toLocaleString('en')} (deepest cursor): median ${ms(deep)} over ${REPETITIONS} (${deepBytes} bytes)`,
  );
  console.log(`    ratio deep / first: ${ratio.toFixed(2)} (target ≤ ${TARGET_RATIO}) ${ok ? 'ok' : 'OVER TARGET'}`);
  return { ok, pages: pageTimes.length, head, tail, first, deep };
}

function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

function seconds(value: number): string {
  return `${(value / 1000).toFixed(1)} s`;
}
