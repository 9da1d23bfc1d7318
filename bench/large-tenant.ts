/**
 * A tenant with 100,000 leads, through the real app (buildApp + inject): SPEC §16's list filtered
 * by a custom field against the same list filtered by `status`, and SPEC §18's pipeline summary.
 *
 * The leads are seeded as bench/lists.ts seeds them (status: one of 7, evenly); then every lead
 * gets `custom.campaign`, one of 7 options (evenly, independent of the status: the same share of
 * rows as a status), and `custom.partner`, an integer one lead in 1,000 shares. Each filter is
 * timed on its first page and on a page 20 pages deep (by X-Next-Cursor), first and deep pages
 * alternating, medians of 30. Target: the custom filter within 2× of the status filter. The
 * summary is timed over all 100,000 leads, and over one source's, 30 times each (p50, p99).
 *
 *   FUNIL_BENCH_DATABASE_URL=postgres://… npm run bench:large-tenant [-- --results <dir>]
 *   (without a PostgreSQL URL only PGlite runs, and says so)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
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

const ROWS = 100_000;
const LIMIT = 100;
const DEEP_PAGES = 20;
const REPETITIONS = 30;
const TARGET_RATIO = 2;
const LEADS_URL = '/api/external/v1/leads';
/** The seeded leads' whole period (one every 10 seconds from 2024-01-01, bench-database.ts). */
const SUMMARY_PERIOD = 'createdSince=2024-01-01T00:00:00Z&createdUntil=2024-02-01T00:00:00Z';
const COMPARED = 'a select, 1 in 7 (as a status)';
const CAMPAIGNS = ['black-friday', 'launch', 'webinar', 'newsletter', 'partner', 'retarget', 'organic'];

const resultsDir = process.argv.includes('--results')
  ? process.argv[process.argv.indexOf('--results') + 1]
  : 'bench/results';

const targets: { label: string; open(): Promise<ScratchDatabase> }[] = [];
const postgresUrl = benchPostgresUrl();
if (postgresUrl) targets.push({ label: 'PostgreSQL', open: () => scratchPostgres(postgresUrl, 'custom') });
else console.log('PostgreSQL: skipped: set FUNIL_BENCH_DATABASE_URL (or FUNIL_TEST_DATABASE_URL) to benchmark it\n');
targets.push({ label: 'PGlite', open: scratchPglite });

const report: string[] = [
  '# A tenant with 100,000 leads: custom field filters (SPEC §16), the pipeline summary (SPEC §18)',
  '',
  `\`npm run bench:large-tenant\`, ${new Date().toISOString().slice(0, 10)}: one tenant with ${ROWS.toLocaleString('en')} leads; ` +
    `limit=${LIMIT}, sort -createdAt; medians of ${REPETITIONS}, first page and page ${DEEP_PAGES + 1} alternating. ` +
    `Target: a custom filter within ${TARGET_RATIO}× of the status filter.`,
  '',
];
let failed = false;
for (const target of targets) {
  const scratch = await target.open();
  try {
    const version = await sql<{ version: string }>`select version()`.execute(scratch.bulk);
    console.log(`${target.label} (${version.rows[0]?.version.split(' on ')[0]})`);
    const tenant = await createTenant(scratch.database, 'Bench');
    const seeding = performance.now();
    await seedLeads(scratch.bulk, tenant, ROWS);
    const app = await benchApp(scratch.database);
    try {
      const call = (method: 'GET' | 'POST', url: string, body?: unknown) =>
        app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });
      for (const field of [
        { resource: 'lead', key: 'campaign', label: 'Campaign', type: 'select', options: CAMPAIGNS },
        { resource: 'lead', key: 'partner', label: 'Partner', type: 'integer' },
      ]) {
        const answer = await call('POST', '/api/external/v1/fields', field);
        if (answer.statusCode !== 201) throw new Error(`define ${field.key}: ${answer.statusCode} ${answer.body}`);
      }
      await sql`
        update leads set custom = jsonb_build_object(
          'campaign', (${CAMPAIGNS}::text[])[1 + abs(hashtext(id::text || 'c')) % 7],
          'partner', abs(hashtext(id::text || 'p')) % 1000)
        where tenant_id = ${tenant.id}`.execute(scratch.bulk);
      await sql`vacuum analyze leads`.execute(scratch.bulk);
      console.log(`  seeded in ${seconds(performance.now() - seeding)}`);
      report.push(
        `## ${target.label}`,
        '',
        '| filter | what it is | rows matching | first page | page 21 | ÷ status |',
        '|---|---|---|---|---|---|',
      );

      const filters: [string, string][] = [
        ['status=qualified', 'status'],
        [`custom.campaign=${CAMPAIGNS[2]}`, COMPARED],
        ['custom.partner=7', 'an integer, 1 in 1,000'],
        [`custom.campaign=${CAMPAIGNS[2]}&status=qualified`, 'both'],
      ];
      let statusFirst = 0;
      let statusDeep = 0;
      for (const [query, label] of filters) {
        const matching = await countMatching(scratch, tenant.id, query);
        const { first, deep } = await timeFilter(app, tenant.token, query);
        if (label === 'status') [statusFirst, statusDeep] = [first, deep];
        // The target holds for the filter that matches as many rows as a status does; the others are shown beside it.
        if (label === COMPARED && Math.max(first / statusFirst, deep / statusDeep) > TARGET_RATIO) failed = true;
        const line = `| \`${query}\` | ${label} | ${matching.toLocaleString('en')} | ${ms(first)} | ${ms(deep)} | ${label === 'status' ? '—' : `${(first / statusFirst).toFixed(2)}× / ${(deep / statusDeep).toFixed(2)}×`} |`;
        report.push(line);
        console.log(`  ${query}: first ${ms(first)}, page ${DEEP_PAGES + 1} ${ms(deep)} (${matching} rows match)`);
      }
      report.push('', '| `GET /leads/summary` | rows counted | p50 | p99 |', '|---|---|---|---|');
      for (const query of [SUMMARY_PERIOD, `${SUMMARY_PERIOD}&source=ads`]) {
        const { p50, p99, total } = await timeSummary(app, tenant.token, query);
        report.push(`| \`${query}\` | ${total.toLocaleString('en')} | ${ms(p50)} | ${ms(p99)} |`);
        console.log(`  summary ${query}: p50 ${ms(p50)}, p99 ${ms(p99)} (${total} leads)`);
      }
      report.push('');
    } finally {
      await app.close();
    }
  } finally {
    await scratch.drop();
  }
}
await mkdir(resultsDir as string, { recursive: true });
await writeFile(join(resultsDir as string, 'large-tenant.md'), `${report.join('\n')}\n`);
console.log(`\nwritten to ${join(resultsDir as string, 'large-tenant.md')}`);
process.exitCode = failed ? 1 : 0;

async function countMatching(scratch: ScratchDatabase, tenantId: string, query: string): Promise<number> {
  const params = new URLSearchParams(query);
  const status = params.get('status');
  const campaign = params.get('custom.campaign');
  const partner = params.get('custom.partner');
  const { rows } = await sql<{ count: number }>`
    select count(*)::int as count from leads
    where tenant_id = ${tenantId}
      ${status ? sql`and status = ${status}` : sql``}
      ${campaign ? sql`and custom ->> 'campaign' = ${campaign}` : sql``}
      ${partner ? sql`and custom -> 'partner' = ${partner}::jsonb` : sql``}`.execute(scratch.bulk);
  return rows[0]?.count ?? 0;
}

async function page(app: FastifyInstance, token: string, query: string) {
  const begin = performance.now();
  const answer = await app.inject({
    method: 'GET',
    url: `${LEADS_URL}?${query}`,
    headers: { authorization: `Bearer ${token}` },
  });
  const elapsed = performance.now() - begin;
  if (answer.statusCode !== 200) throw new Error(`GET ${query}: ${answer.statusCode} ${answer.body}`);
  const cursor = answer.headers['x-next-cursor'];
  return { ms: elapsed, cursor: typeof cursor === 'string' ? cursor : undefined };
}

/** Medians of the first page and of a page `DEEP_PAGES` pages in. */
async function timeFilter(app: FastifyInstance, token: string, filter: string) {
  const base = `${filter}&limit=${LIMIT}`;
  for (let i = 0; i < 5; i++) await page(app, token, base);
  let deepQuery = base;
  for (let i = 0; i < DEEP_PAGES; i++) {
    const { cursor } = await page(app, token, deepQuery);
    if (!cursor) break;
    deepQuery = `${base}&cursor=${encodeURIComponent(cursor)}`;
  }
  const first: number[] = [];
  const deep: number[] = [];
  for (let i = 0; i < REPETITIONS; i++) {
    first.push((await page(app, token, base)).ms);
    deep.push((await page(app, token, deepQuery)).ms);
  }
  return { first: median(first), deep: median(deep) };
}

/** p50 and p99 of the summary's answer time, and the leads it counted. */
async function timeSummary(app: FastifyInstance, token: string, query: string) {
  const times: number[] = [];
  let total = 0;
  for (let i = 0; i < 5 + REPETITIONS; i++) {
    const begin = performance.now();
    const answer = await app.inject({
      method: 'GET',
      url: `${LEADS_URL}/summary?${query}`,
      headers: { authorization: `Bearer ${token}` },
    });
    if (answer.statusCode !== 200) throw new Error(`summary ${query}: ${answer.statusCode} ${answer.body}`);
    if (i >= 5) times.push(performance.now() - begin);
    total = (answer.json() as { total: number }).total;
  }
  times.sort((a, b) => a - b);
  return { p50: median(times), p99: times[Math.ceil(times.length * 0.99) - 1] as number, total };
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

function seconds(value: number): string {
  return `${(value / 1000).toFixed(1)} s`;
}
