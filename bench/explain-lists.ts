/**
 * EXPLAIN of every list query (SPEC §6) on PostgreSQL: each lead sort, ascending and descending,
 * first page and a page deep behind a cursor, alone and with each filter.
 *
 * The SQL is the service's own: `LeadService.list` runs on a Kysely instance with a plugin
 * that records each query as compiled (after the camel-case plugin), and that exact text and its
 * parameters are then EXPLAINed, bound the same way. Nothing is rewritten by hand.
 *
 *   FUNIL_BENCH_DATABASE_URL=postgres://… npx tsx bench/explain-lists.ts [--verbose] [--keep]
 */
import { CompiledQuery, sql } from 'kysely';
import { DEFAULT_LEAD_STATUSES } from '../src/config.js';
import type { LeadFilters, LeadSortField } from '../src/leads/lead.repository.js';
import { LEAD_SORT_KEYS } from '../src/leads/lead.repository.js';
import { buildRecordServices } from '../src/services.js';
import { RecordQueries } from '../test/helpers/record-queries.js';
import { benchPostgresUrl, createTenant, scratchPostgres, seedLeads } from './bench-database.js';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const url = benchPostgresUrl();
if (!url) {
  console.log(
    'explain-lists: skipped: set FUNIL_BENCH_DATABASE_URL (or FUNIL_TEST_DATABASE_URL) to a PostgreSQL server',
  );
  process.exit(0);
}
const verbose = process.argv.includes('--verbose');
/** Keeps the scratch database for a closer look (its name is printed). */
const keep = process.argv.includes('--keep');
const TENANT_ROWS = [30_000, 15_000, 5_000];

const scratch = await scratchPostgres(url, 'explain');
try {
  const { database } = scratch;
  const tenants = [];
  let from = 1;
  const seeded = performance.now();
  for (const [index, rows] of TENANT_ROWS.entries()) {
    const tenant = await createTenant(database, `Tenant ${index + 1}`);
    await seedLeads(scratch.bulk, tenant, rows, from);
    from += rows;
    tenants.push(tenant);
  }
  // VACUUM as well as ANALYZE: it empties the GIN pending lists a bulk load leaves, which autovacuum would empty soon after.
  await sql`vacuum analyze`.execute(scratch.bulk);
  console.log(
    `seeded ${TENANT_ROWS.join(' + ')} leads over ${tenants.length} tenants in ${Math.round(performance.now() - seeded)} ms; vacuumed and analyzed\n`,
  );
  // The middle tenant: its rows sit between two others' in every index led by tenant_id.
  const tenant = tenants[1] as (typeof tenants)[number];

  const recorder = new RecordQueries();
  const leads = buildRecordServices(database.db, { statuses: DEFAULT_LEAD_STATUSES, scanRows: undefined }).leads;
  const recorded = database.db.withPlugin(recorder);
  const filterCases: [string, LeadFilters][] = [
    ['no filter', {}],
    ['status=won', { statuses: ['won'] }],
    ['status=new,qualified,proposal', { statuses: ['new', 'proposal', 'qualified'] }],
    ['source=form', { source: 'form' }],
    ['email=lead33333@example.com', { email: 'lead33333@example.com' }],
    ['q=silva', { q: 'silva' }],
    ['q=33333', { q: '33333' }],
    ['updatedSince (last 10%)', { updatedSince: '2024-02-26T00:00:00.000Z' }],
    ['createdSince (last 10%)', { createdSince: '2024-02-25T00:00:00.000Z' }],
    ['scoreMin=90', { scoreMin: 90 }],
    ['scoreMin=40&scoreMax=60', { scoreMin: 40, scoreMax: 60 }],
  ];
  const summary: string[][] = [];
  for (const field of Object.keys(LEAD_SORT_KEYS) as LeadSortField[]) {
    for (const descending of [false, true]) {
      const sort = `${descending ? '-' : ''}${field}`;
      const key = LEAD_SORT_KEYS[field];
      for (const [label, filters] of filterCases) {
        for (const deep of [false, true]) {
          // A cursor 60% into the tenant's filtered rows, found by walking the real query.
          let after: { value: string | number; id: string } | undefined;
          if (deep) {
            const { items: all } = await leads.list(recorded, tenant.id, filters, { key, descending, limit: 20_000 });
            const row = all[Math.floor(all.length * 0.6)];
            if (row === undefined) continue;
            after = { value: key.valueOf(row), id: row._id };
          }
          await leads.list(recorded, tenant.id, filters, { key, descending, limit: 100, after });
          const query = recorder.last as CompiledQuery;
          const explained = await database.db.executeQuery<{
            'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }];
          }>(CompiledQuery.raw(`explain (analyze, buffers, format json) ${query.sql}`, [...query.parameters]));
          const [{ Plan: plan, 'Execution Time': ms }] = (explained.rows[0] as (typeof explained.rows)[number])[
            'QUERY PLAN'
          ];
          const verdict = classify(plan);
          summary.push([sort, label, deep ? 'cursor' : 'first', verdict, `${ms.toFixed(2)} ms`]);
          console.log(
            `sort=${sort}  ${label}  ${deep ? 'page behind a cursor' : 'first page'}  →  ${verdict}  (${ms.toFixed(2)} ms)`,
          );
          const text = await database.db.executeQuery<{ 'QUERY PLAN': string }>(
            CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]),
          );
          const lines = text.rows.map((row) => row['QUERY PLAN']);
          for (const line of verbose ? lines : lines.slice(0, 4)) console.log(`    ${line}`);
          if (verbose) console.log(`    -- ${query.sql}\n    -- ${JSON.stringify(query.parameters)}`);
        }
      }
    }
  }
  const notIndexed = summary.filter((row) => !row[3]?.startsWith('keyset index scan'));
  console.log(
    `\n${summary.length} plans; ${summary.length - notIndexed.length} are a keyset index scan on the sort's index.`,
  );
  console.log('The others:');
  for (const row of notIndexed) console.log(`  ${row.join('  |  ')}`);
} finally {
  if (keep) console.log(`\nkept database ${scratch.name}`);
  else await scratch.drop();
}

/** The index the sort's keyset walk should use (migrations T1000, T1200). */
function sortIndexOf(plan: PlanNode): string | undefined {
  return plan['Index Name'];
}

/** What the plan does under its Limit: a keyset index scan, or something that reads and sorts. */
function classify(root: PlanNode): string {
  let node = root;
  while (node['Node Type'] === 'Limit' && node.Plans?.[0]) node = node.Plans[0];
  const type = node['Node Type'];
  if (
    (type === 'Index Scan' || type === 'Index Only Scan') &&
    /_tenant_(created|updated|name|score|last_contact)_idx$/.test(sortIndexOf(node) ?? '')
  ) {
    const removed = node['Rows Removed by Filter'] ?? 0;
    return `keyset index scan ${node['Index Name']} ${node['Scan Direction']?.toLowerCase()} (filtered out ${removed})`;
  }
  const inner: string[] = [];
  const visit = (n: PlanNode) => {
    inner.push(n['Index Name'] ? `${n['Node Type']} on ${n['Index Name']}` : n['Node Type']);
    for (const child of n.Plans ?? []) visit(child);
  };
  visit(node);
  return inner.join(' > ');
}
