/**
 * The cost of the most expensive lists on the embedded database, where a statement cannot be
 * interrupted (SPEC §10): one tenant of many leads, every lead sort both ways, each with the filters
 * a flooder would pick, `limit=1000`, first page and a page behind a cursor. The SQL is the
 * service's own (`LeadService.list`). Prints the slowest combinations and the spread.
 *
 * Each page reads at most FUNIL_LIST_SCAN_ROWS rows, as the server does (50,000 by default);
 * `--scan-rows 0` measures the lists without that bound.
 *
 *   npx tsx bench/pglite-list-cost.ts [--rows 1000000] [--scan-rows 50000]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { DEFAULT_LEAD_STATUSES } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { LEAD_SORT_KEYS, type LeadFilters, type LeadSortField } from '../src/leads/lead.repository.js';
import { defaultListScanRows } from '../src/records/scan-window.js';
import { buildRecordServices } from '../src/services.js';
import { createTenant, median, seedLeads } from './bench-database.js';

function option(name: string): number | undefined {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : undefined;
}
const ROWS = option('--rows') ?? 1_000_000;
const SCAN_ROWS = option('--scan-rows') ?? defaultListScanRows('pglite');
const LIMIT = 1000;
const ROUNDS = 3;

const FILTERS: [string, LeadFilters][] = [
  ['no filter', {}],
  ['status=won', { statuses: ['won'] }],
  ['status=new,won,lost', { statuses: ['new', 'won', 'lost'] }],
  ['source=event', { source: 'event' }],
  ['status=won&source=event', { statuses: ['won'], source: 'event' }],
  ['q=ana (common)', { q: 'ana' }],
  ['q=com (every e-mail)', { q: 'com' }],
  ['q=ead99 (rare)', { q: 'ead99' }],
  ['q=a santos 99 (common trigrams, rare text)', { q: 'a santos 99' }],
  ['scoreMin=99', { scoreMin: 99 }],
  ['scoreMin=50&scoreMax=50', { scoreMin: 50, scoreMax: 50 }],
  [
    'status=new,won&source=event&scoreMin=40&scoreMax=60',
    { statuses: ['new', 'won'], source: 'event', scoreMin: 40, scoreMax: 60 },
  ],
  ['createdSince (last 1%)', { createdSince: new Date(Date.parse('2024-01-01') + ROWS * 9_900).toISOString() }],
  ['updatedSince 2024&scoreMin=100', { updatedSince: '2024-01-01T00:00:00.000Z', scoreMin: 100 }],
  ['q=silva&status=lost&scoreMin=90', { q: 'silva', statuses: ['lost'], scoreMin: 90 }],
];

const dataDir = await mkdtemp(join(tmpdir(), 'funil-list-cost-'));
const database = await openDatabase({
  dataDir,
  poolSize: 1,
  logger: pino({ level: 'warn' }),
  connectTimeoutMs: 600_000,
});
try {
  await migrateToLatest(database.db);
  const tenant = await createTenant(database, 'Large tenant');
  const seeded = performance.now();
  for (let from = 1; from <= ROWS; from += 100_000) {
    await seedLeads(database.db, tenant, Math.min(100_000, ROWS - from + 1), from);
  }
  // What the embedded database's periodic VACUUM ANALYZE leaves: current statistics, no GIN pending list.
  await sql`vacuum analyze`.execute(database.db);
  console.log(
    `seeded ${ROWS} leads in one tenant in ${Math.round(performance.now() - seeded)} ms; limit=${LIMIT}, scan bound ${SCAN_ROWS || 'none'}\n`,
  );

  const leads = buildRecordServices(database.db, {
    statuses: DEFAULT_LEAD_STATUSES,
    scanRows: SCAN_ROWS || undefined,
  }).leads;
  const results: { label: string; ms: number }[] = [];
  for (const field of Object.keys(LEAD_SORT_KEYS) as LeadSortField[]) {
    const key = LEAD_SORT_KEYS[field];
    for (const descending of [false, true]) {
      for (const [name, filters] of FILTERS) {
        const { items: first } = await leads.list(database.db, tenant.id, filters, { key, descending, limit: LIMIT });
        const middle = first[Math.floor(first.length / 2)];
        const pages = [undefined, middle && { value: key.valueOf(middle), id: middle._id }];
        for (const [index, after] of pages.entries()) {
          const times: number[] = [];
          for (let round = 0; round < ROUNDS; round++) {
            const started = performance.now();
            await leads.list(database.db, tenant.id, filters, { key, descending, limit: LIMIT, after });
            times.push(performance.now() - started);
          }
          const label = `sort=${descending ? '-' : ''}${field}  ${name}  ${index === 0 ? 'first page' : 'behind a cursor'}`;
          results.push({ label, ms: median(times) });
        }
      }
    }
  }
  results.sort((a, b) => b.ms - a.ms);
  console.log('slowest (median of 3 rounds):');
  for (const { label, ms } of results.slice(0, 12)) console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${label}`);
  const all = results.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q: number) => (all[Math.min(all.length - 1, Math.floor(q * all.length))] as number).toFixed(1);
  console.log(`\n${results.length} lists: median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`);
} finally {
  await database.close();
  await rm(dataDir, { recursive: true, force: true });
}
