/**
 * SPEC §22's filters, measured (issue 44, item 3), through the real app in one process:
 *
 * 1. Deliveries per second to 25 subscriptions of one tenant, without a filter and with one (four
 *    tests that every event passes, so both deliver the same), and with a filter half the events
 *    fail: from the first write to the last delivery's arrival at a receiver on 127.0.0.1, and to
 *    the moment every subscription's place in the feed is past the last event (dispatched).
 * 2. What a compiled filter costs an event, and compiling one (apart from the database).
 * 3. Walking a feed of N events, 100 a page, without a filter and through filters that let all,
 *    half and 1% of them through: time per page and in all.
 *
 *   npx tsx bench/webhook-filters.ts [--leads N] [--events N] [--results DIR]
 *   PostgreSQL when FUNIL_BENCH_DATABASE_URL (or FUNIL_TEST_DATABASE_URL) is set, else PGlite;
 *   --backend pglite (or embedded) forces PGlite. Writes bench/results/webhook-filters-<backend>.md.
 */

import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { compileFilter, FilterCache } from '../src/events/event-filter.js';
import type { EventFilter } from '../src/events/event-filter.schemas.js';
import { withDatabase } from '../test/helpers/postgres-admin.js';
import { quantile } from '../test/helpers/quantile.js';
import { benchBackend, onScratch } from './backend-sections.js';
import { type BenchTenant, benchApp, createTenant, median, type ScratchDatabase, seedLeads } from './bench-database.js';

const API = '/api/external/v1';
const SUBSCRIPTIONS = 25;

const { values: options } = parseArgs({
  options: {
    leads: { type: 'string', default: '200' },
    events: { type: 'string', default: '20000' },
    backend: { type: 'string' },
    results: { type: 'string', default: 'bench/results' },
  },
});
const target = benchBackend(options.backend);
const { url, name: backend } = target;

/** Passed by every lead.created event: four tests, and every part of a filter. */
const ALL_PASS: EventFilter = {
  changedFields: ['status'],
  where: { all: [{ score: { gte: 0 } }, { any: [{ source: { eq: 'nowhere' } }, { status: { exists: true } }] }] },
  excludeActors: ['0190a0a0-0000-7000-8000-0000000000aa'],
};
const HALF_PASS: EventFilter = { where: { score: { gte: 50 } } };
const ONE_IN_A_HUNDRED: EventFilter = { where: { score: { eq: 7 } } };

// Deliveries arrive here, counted by path (one path per subscription).
const arrivals = new Map<string, number>();
let lastArrival = 0;
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const path = request.url ?? '';
    arrivals.set(path, (arrivals.get(path) ?? 0) + 1);
    lastArrival = performance.now();
    response.writeHead(204).end();
  });
});
await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
const receiverBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

/** The app with webhook delivery on, to the receiver on 127.0.0.1. */
function deliveringApp(scratch: ScratchDatabase): Promise<FastifyInstance> {
  return benchApp(scratch.database, {
    FUNIL_WEBHOOKS_DELIVER: 'true',
    FUNIL_WEBHOOKS_ALLOW_HTTP: 'true',
    FUNIL_WEBHOOKS_ALLOW_PRIVATE: 'true',
    ...(url ? { DATABASE_URL: withDatabase(url, scratch.name) } : {}),
  });
}

function caller(app: FastifyInstance, tenant: BenchTenant) {
  return async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, query?: Record<string, string>) => {
    const res = await app.inject({
      method,
      url: `${API}${path}`,
      query,
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`);
    return { body: res.json(), headers: res.headers };
  };
}

interface DeliveryRun {
  label: string;
  deliveries: number;
  dispatchedMs: number;
  deliveredMs: number;
}

/** 25 subscriptions with `filter` (or none) on a new tenant, then `leads` leads created 100 at a time. */
async function deliveryRun(
  app: FastifyInstance,
  scratch: ScratchDatabase,
  label: string,
  filter: EventFilter | null,
  leads: number,
): Promise<DeliveryRun> {
  const tenant = await createTenant(scratch.database, `Bench ${label}`);
  const call = caller(app, tenant);
  const prefix = `/${label.replaceAll(/\W+/g, '-')}-${Date.now()}/`;
  for (let n = 0; n < SUBSCRIPTIONS; n++) {
    await call('POST', '/webhooks', { url: `${receiverBase}${prefix}${n}`, events: ['lead.created'], filter });
  }
  const scores = Array.from({ length: leads }, (_, n) => (n * 37) % 100);
  const passing = scores.filter((score) => filter !== HALF_PASS || score >= 50).length;
  const expected = passing * SUBSCRIPTIONS;
  const arrived = () =>
    [...arrivals].filter(([path]) => path.startsWith(prefix)).reduce((sum, [, count]) => sum + count, 0);
  const started = performance.now();
  for (let from = 0; from < leads; from += 100) {
    const items = scores
      .slice(from, from + 100)
      .map((score, n) => ({ name: `Lead ${from + n}`, phone: '1', score, source: 'bench' }));
    await call('POST', '/leads/batch', { items });
  }
  let dispatchedMs = Number.NaN;
  const deadline = Date.now() + 600_000;
  while (arrived() < expected || Number.isNaN(dispatchedMs)) {
    if (Date.now() > deadline) throw new Error(`${label}: ${arrived()} of ${expected} arrived`);
    if (Number.isNaN(dispatchedMs) && (await allDispatched(scratch, tenant.id))) {
      dispatchedMs = performance.now() - started;
    }
    await new Promise((done) => setTimeout(done, 20));
  }
  if (arrived() !== expected) throw new Error(`${label}: ${arrived()} arrived, ${expected} expected`);
  return { label, deliveries: expected, dispatchedMs, deliveredMs: lastArrival - started };
}

/** Whether every subscription of the tenant has its place in the feed past the tenant's last event. */
async function allDispatched(scratch: ScratchDatabase, tenantId: string): Promise<boolean> {
  const { rows } = await sql<{ behind: number }>`
    select count(*)::int as behind from webhook_subscriptions s
    where s.tenant_id = ${tenantId} and exists (
      select 1 from events e where e.tenant_id = s.tenant_id and (e.xid, e.seq) > (s.cursor_xid, s.cursor_seq))`.execute(
    scratch.bulk,
  );
  return rows[0]?.behind === 0;
}

/** What one event costs a compiled filter, and what compiling one costs, in this process alone. */
function filterCost(): string[] {
  const event = {
    type: 'lead.created',
    data: {
      object: { _id: 'x', name: 'Ana', status: 'new', score: 42, source: 'bench', custom: { tier: 'gold' } },
      changedFields: [],
    },
  };
  const compiled = compileFilter(ALL_PASS);
  const rounds = 2_000_000;
  let passed = 0;
  for (let i = 0; i < 100_000; i++) passed += compiled.matches(event) ? 1 : 0;
  let started = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) passed += compiled.matches(event) ? 1 : 0;
  const perEvent = Number(process.hrtime.bigint() - started) / rounds;
  const compiles = 20_000;
  started = process.hrtime.bigint();
  for (let i = 0; i < compiles; i++) compileFilter({ ...ALL_PASS, types: [`lead.created`] });
  const perCompile = Number(process.hrtime.bigint() - started) / compiles / 1000;
  const cache = new FilterCache();
  cache.compile(ALL_PASS);
  started = process.hrtime.bigint();
  for (let i = 0; i < compiles; i++) cache.compile(ALL_PASS);
  const perHit = Number(process.hrtime.bigint() - started) / compiles / 1000;
  if (passed === 0) throw new Error('the filter let nothing through');
  return [
    `| a compiled filter of 4 tests (changedFields, where all/any, excludeActors) on one event | ${perEvent.toFixed(0)} ns |`,
    `| compiling it (uncached) | ${perCompile.toFixed(1)} µs |`,
    `| finding it in the cache (the JSON of the filter, LRU) | ${perHit.toFixed(1)} µs |`,
  ];
}

/** Walks the whole feed 100 events a page, through `filter`; the time of each page. */
async function walkFeed(call: ReturnType<typeof caller>, filter: EventFilter | null) {
  const times: number[] = [];
  let shown = 0;
  let after: string | undefined;
  const started = performance.now();
  for (;;) {
    const query: Record<string, string> = { limit: '100' };
    if (after) query.after = after;
    if (filter) query.filter = JSON.stringify(filter);
    const pageStarted = performance.now();
    const { body, headers } = await call('GET', '/events', undefined, query);
    times.push(performance.now() - pageStarted);
    shown += (body as unknown[]).length;
    after = headers['x-next-cursor'] as string | undefined;
    if (!after) break;
  }
  return { pages: times.length, shown, times: times.sort((a, b) => a - b), totalMs: performance.now() - started };
}

async function run(scratch: ScratchDatabase): Promise<string> {
  const app = await deliveringApp(scratch);
  const leads = Number(options.leads);
  const runs: DeliveryRun[] = [];
  try {
    // A first small round warms the queue, the statements and the JIT; it is not reported.
    await deliveryRun(app, scratch, 'warm-up', null, 100);
    // In the order A B B A A B, so that a drift over the run (the tables grow, the machine's other
    // work comes and goes) falls on both alike.
    for (const [round, filtered] of [
      [1, false],
      [1, true],
      [2, true],
      [2, false],
      [3, false],
      [3, true],
    ] as const) {
      runs.push(
        filtered
          ? await deliveryRun(app, scratch, `filter, all pass #${round}`, ALL_PASS, leads)
          : await deliveryRun(app, scratch, `no filter #${round}`, null, leads),
      );
    }
    runs.push(await deliveryRun(app, scratch, 'filter, half pass', HALF_PASS, leads));

    // The feed: N lead.created events of leads as seedLeads makes them (scores 0–100).
    const events = Number(options.events);
    const tenant = await createTenant(scratch.database, 'Feed');
    await seedLeads(scratch.bulk, tenant, events);
    await sql`
      insert into events (tenant_id, type, object_id, token_id, object)
      select tenant_id, 'lead.created', id, created_by, to_jsonb(l) from leads l
      where tenant_id = ${tenant.id} order by created_at, id`.execute(scratch.bulk);
    const call = caller(app, tenant);
    await walkFeed(call, null);
    const walks = [];
    for (const [label, filter] of [
      ['no filter', null],
      ['filter, all pass (4 tests)', ALL_PASS],
      ['filter, half pass (score ≥ 50)', HALF_PASS],
      ['filter, 1% pass (score = 7)', ONE_IN_A_HUNDRED],
    ] as const) {
      walks.push({ label, ...(await walkFeed(call, filter)) });
    }

    const rate = (r: DeliveryRun) => Math.round(r.deliveries / (r.deliveredMs / 1000));
    const medianOf = (prefix: string) => {
      const chosen = runs.filter((r) => r.label.startsWith(prefix));
      return `${Math.round(median(chosen.map(rate)))} deliveries/s, dispatched after ${(median(chosen.map((r) => r.dispatchedMs)) / 1000).toFixed(2)} s`;
    };
    return [
      `### ${backend}`,
      '',
      `Deliveries: ${SUBSCRIPTIONS} subscriptions of one tenant to \`lead.created\`, ${leads} leads created 100 a ` +
        'request; from the first write to the last arrival (receiver on 127.0.0.1, answering 204 at once, in the ' +
        "same process as the app), and to every subscription's place in the feed past the last event.",
      '',
      '| subscriptions | deliveries | all dispatched after | all delivered after | deliveries/s |',
      '|---|---:|---:|---:|---:|',
      ...runs.map(
        (r) =>
          `| ${r.label} | ${r.deliveries} | ${(r.dispatchedMs / 1000).toFixed(2)} s | ${(r.deliveredMs / 1000).toFixed(2)} s | **${rate(r)}** |`,
      ),
      '',
      `Medians of the three rounds: no filter ${medianOf('no filter')}; filter, all pass ${medianOf('filter, all pass')}.`,
      '',
      `The feed: ${events.toLocaleString('en')} events of one tenant, walked 100 a page (following X-Next-Cursor); ` +
        'a filtered page reads at most about 1,000 events.',
      '',
      '| feed | pages | events shown | ms/page p50 | p95 | max | whole walk |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...walks.map(
        (w) =>
          `| ${w.label} | ${w.pages} | ${w.shown} | ${median(w.times).toFixed(1)} | ${quantile(w.times, 0.95).toFixed(1)} | ${(w.times.at(-1) ?? 0).toFixed(1)} | ${(w.totalMs / 1000).toFixed(2)} s |`,
      ),
      '',
    ].join('\n');
  } finally {
    await app.close();
  }
}

let section: string;
try {
  // The app closes the database; onScratch drops what is left of it.
  section = await onScratch(target, 'benchfilters', run);
} finally {
  receiver.close();
}
const report = [
  '# Filtered subscriptions and feed (SPEC §22)',
  '',
  `\`npx tsx bench/webhook-filters.ts\`, ${new Date().toISOString()}, one process (the app, its dispatcher and worker, the receiver).`,
  '',
  section,
  'A filter alone, in this process (no database):',
  '',
  '| measure | value |',
  '|---|---|',
  ...filterCost(),
  '',
].join('\n');
await mkdir(options.results as string, { recursive: true });
await writeFile(join(options.results as string, `webhook-filters-${url ? 'postgres' : 'pglite'}.md`), report);
process.stdout.write(report);
