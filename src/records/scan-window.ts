import { type AliasableExpression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.js';
import { type KeysetPage, keysetPage, rowsAsNamed } from '../db/keyset.js';

// biome-ignore lint/suspicious/noExplicitAny: a store's table is named at run time, its columns are not Kysely's static types.
export type AnyQuery = SelectQueryBuilder<any, any, any>;
// biome-ignore lint/suspicious/noExplicitAny: as above.
export type Condition = (eb: ExpressionBuilder<any, any>) => AliasableExpression<SqlBool>;

/** A page of list rows, and where to resume when the page stopped at its scan bound. */
export interface ListRows {
  readonly rows: Record<string, unknown>[];
  /** The last row the page read, when it read as many as it may: more may match after it. */
  readonly resumeAfter?: Record<string, unknown> | undefined;
}

/**
 * Which tenants hold more rows than a page may read. A tenant with fewer cannot make any plan read
 * more, so its filtered pages keep the planner's best plan (an index on the filter, a trigram
 * search); only larger ones need scanWindowPage. Counted at most once a minute per tenant, by
 * reading at most `scanRows + 1` entries of the tenant's index.
 */
export class LargeTenants {
  readonly #known = new LRUCache<string, boolean>({ max: 10_000, ttl: 60_000, ttlAutopurge: false });

  constructor(
    private readonly table: string,
    private readonly scanRows: number,
  ) {}

  async has(handle: Db, tenantId: string): Promise<boolean> {
    const known = this.#known.get(tenantId);
    if (known !== undefined) return known;
    const { rows } = await sql<{ counted: number }>`
      select count(*)::int as counted
      from (select 1 from ${sql.table(this.table)} where tenant_id = ${tenantId} limit ${this.scanRows + 1}) as tenant_rows`.execute(
      handle,
    );
    const large = (rows[0]?.counted ?? 0) > this.scanRows;
    this.#known.set(tenantId, large);
    return large;
  }
}

/**
 * A filtered page that reads at most `scanRows` rows (SPEC §10). The embedded database runs one
 * statement at a time and cannot interrupt one, so a page whose filters match rarely in the sort's
 * order (or whose plan the planner misjudged: `q=ana&sort=-name` read 900,000 rows of a
 * 1,000,000-row tenant, 3.1 s) would hold every other request behind it. Here the sort's own index
 * is read for at most `scanRows` rows after the cursor, the filters are applied to those, and when
 * they match fewer than a page the answer is the matches so far plus the position to resume at:
 * a short page, or an empty one, with a next cursor.
 */
export async function scanWindowPage<Item>(
  handle: Db,
  tenantRows: AnyQuery,
  selection: readonly unknown[],
  matches: Condition,
  page: KeysetPage<Item>,
  scanRows: number,
): Promise<ListRows> {
  const direction = sql.raw(page.descending ? 'desc' : 'asc');
  // The sort value as a column of its own: ordering by it, the outer query keeps the window's
  // order without sorting, so it stops reading once it has its rows.
  const window = keysetPage(tenantRows.selectAll().select(page.key.expression.as('scanKey')), {
    ...page,
    limit: scanRows - 1, // keysetPage reads one row more than its limit
  });
  const numbered = handle
    .selectFrom(window.as('window'))
    .selectAll()
    .select(sql<number>`row_number() over (order by scan_key ${direction}, id ${direction})`.as('scanRow'));
  const query = handle
    .selectFrom(numbered.as('scanned'))
    .select(selection as never)
    .select((eb) => [matches(eb).as('scanMatched'), sql<boolean>`scan_row = ${scanRows}`.as('scanEnd')])
    .where((eb) => eb.or([matches(eb), eb(sql.ref('scan_row'), '=', scanRows)]))
    .orderBy(sql`scan_key ${direction}, id ${direction}`)
    .limit(page.limit + 2);
  const rows = await rowsAsNamed<Record<string, unknown>>(handle, query);
  const resumeAfter = rows.find((row) => row.scan_end === true);
  return { rows: rows.filter((row) => row.scan_matched === true), resumeAfter };
}

/**
 * The embedded database reads at most this many rows for one filtered page (about 110 ms there on a
 * 2-core machine, bench/pglite-list-cost.ts);
 * PostgreSQL's statement timeout bounds its queries, and it runs many at once.
 */
export function defaultListScanRows(backend: 'pglite' | 'postgres'): number | undefined {
  return backend === 'pglite' ? 50_000 : undefined;
}
