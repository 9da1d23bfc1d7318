import type { SelectQueryBuilder } from 'kysely';
import type { Db } from './database.js';
import { type KeysetPage, keysetPage, rowsAsNamed } from './keyset.js';
import type { Condition, ListRows } from './scan-window.js';

// biome-ignore lint/suspicious/noExplicitAny: a store's table is named at run time, its columns are not Kysely's static types.
type AnyQuery = SelectQueryBuilder<any, any, any>;

/** The fewest and the most rows the first step reads: 1,000 cost PostgreSQL about 2 ms, 20,000 about 40. */
const MIN_WALK_ROWS = 1_000;
const MAX_WALK_ROWS = 20_000;
/** A term that matches one row in 20 of the newest fills its page within the first step. */
const WALK_ROWS_PER_ITEM = 20;

/** Tenants with more rows than this search in two steps (LargeTenants); a smaller one cannot make any plan read more. */
export const SEARCH_WALK_THRESHOLD = MIN_WALK_ROWS;

/**
 * A page of a `q` search (SPEC §6) on PostgreSQL, in at most two statements, neither of which reads
 * the whole tenant on a bad guess.
 *
 * PostgreSQL guesses how many rows a substring matches from the hundred values its statistics keep
 * of the search expression. A term that is part of one of them is guessed to match 1 % of the
 * rows, and asked for a page in one statement the planner then walks the sort's index, filtering,
 * until it has the page: for a term that matches a few rows, every row of the tenant (234-388 ms for
 * a page of 100 of a tenant of 200,000 leads, 1.2 s of one of 500,000;
 * bench/results/schema-cost-notes.md). Nothing in the statement can tell it otherwise. So:
 *
 * 1. The newest rows in the page's order (after its cursor), a bounded number of them, filtered:
 *    a common term fills its page here, from the sort's index, as the planner would have.
 * 2. Else the term is rare among them: every match of the tenant from the trigram index (the
 *    subquery's OFFSET 0 keeps the planner from walking the sort's index instead), then the page
 *    of them, sorted.
 */
export async function searchPage<Item>(
  handle: Db,
  tenantRows: AnyQuery,
  selection: readonly unknown[],
  matches: Condition,
  page: KeysetPage<Item>,
): Promise<ListRows> {
  const walkRows = Math.min(MAX_WALK_ROWS, Math.max(MIN_WALK_ROWS, WALK_ROWS_PER_ITEM * (page.limit + 1)));
  // keysetPage reads one row more than its limit.
  const newest = keysetPage(tenantRows.selectAll(), { ...page, limit: walkRows - 1 });
  const walked = handle
    .selectFrom(newest.as('newest'))
    .select(selection as never)
    .where(matches);
  const rows = await rowsAsNamed<Record<string, unknown>>(handle, keysetPage(walked, { ...page, after: undefined }));
  if (rows.length > page.limit) return { rows };
  const found = handle
    .selectFrom(tenantRows.selectAll().where(matches).offset(0).as('found'))
    .select(selection as never);
  return { rows: await rowsAsNamed(handle, keysetPage(found, page)) };
}
