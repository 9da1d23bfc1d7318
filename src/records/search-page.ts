import type { RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { type KeysetPage, keysetCondition, keysetPage, rowsAsNamed } from '../db/keyset.js';
import type { AnyQuery, Condition, ListRows } from './scan-window.js';

/** The fewest and the most rows the first step reads: 1,000 cost PostgreSQL about 2 ms, 20,000 about 40. */
const MIN_WALK_ROWS = 1_000;
const MAX_WALK_ROWS = 20_000;
/** A term that matches one row in 20 of the first in the page's order fills its page within the first step. */
const WALK_ROWS_PER_ITEM = 20;

/** Tenants with more rows than this search in two steps (LargeTenants); a smaller one cannot make any plan read more. */
export const SEARCH_WALK_THRESHOLD = MIN_WALK_ROWS;

/**
 * A page of a `q` search (SPEC §6) on PostgreSQL, in at most two statements, neither of which reads
 * the whole tenant on a bad guess.
 *
 * PostgreSQL guesses how many rows a substring matches from the hundred values its statistics keep
 * of the search expression, over every tenant's rows. A term that is part of one of them is guessed
 * to match 1 % of the rows, and asked for a page in one statement the planner then walks the sort's
 * index, filtering, until it has the page: for a term that matches a few rows, every row of the
 * tenant (378 ms for a page of 100 of a tenant of 200,000 leads, 1.2 s of one of 500,000;
 * bench/results/schema-cost-notes.md). Nothing in the statement can tell it otherwise, and which
 * terms it misjudges depends on other tenants' rows, so every search takes the same steps:
 *
 * 1. The first rows in the page's order (after its cursor), a bounded number of them, filtered:
 *    a common term fills its page here, from the sort's index, as the planner would have.
 * 2. Else the term is rare among them: its matches after the cursor, in a subquery that OFFSET 0
 *    keeps whole (no ORDER BY or LIMIT for the planner to walk the sort's index for, so it reads
 *    the trigram index unless it guesses the term matches most rows), then the page of them, sorted.
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
  const first = keysetPage(tenantRows.selectAll(), { ...page, limit: walkRows - 1 });
  const walked = handle
    .selectFrom(first.as('first'))
    .select(selection as never)
    .where(matches);
  const rows = await rowsAsNamed<Record<string, unknown>>(handle, keysetPage(walked, { ...page, after: undefined }));
  if (rows.length > page.limit) return { rows };
  const after = keysetCondition(page);
  const matched = tenantRows
    .selectAll()
    .where(matches)
    .$if(after !== undefined, (query) => query.where(after as RawBuilder<boolean>))
    .offset(0);
  const found = handle.selectFrom(matched.as('found')).select(selection as never);
  return { rows: await rowsAsNamed(handle, keysetPage(found, { ...page, after: undefined })) };
}
