import {
  type Compilable,
  type CompiledQuery,
  type QueryResult,
  type RawBuilder,
  type SelectQueryBuilder,
  sql,
} from 'kysely';
import { isUuid } from '../shared/ids.js';
import type { Db } from './database.js';

/** Where a page ended: the sort value and the id of its last row. */
export interface CursorPosition {
  readonly value: string | number | null;
  readonly id: string;
}

/** A documented sort: its value as SQL, written exactly as its index is built. */
export interface SortKey<Row> {
  readonly expression: RawBuilder<unknown>;
  readonly type: 'timestamptz' | 'text' | 'integer';
  /** The sort value of a row, as it goes into a cursor. */
  valueOf(row: Row): string | number;
}

export interface KeysetPage<Row> {
  readonly key: SortKey<Row>;
  readonly descending: boolean;
  readonly limit: number;
  /** The position the previous page ended at. */
  readonly after?: CursorPosition | undefined;
}

/**
 * A list page's rows: up to one more than the page (which says another page exists), and where to
 * resume when the page stopped at its scan bound before finding them (RecordStore.list).
 */
export interface ListedRows<Item> {
  readonly items: Item[];
  readonly resumeAfter?: Item | undefined;
}

/**
 * Keyset paging (SPEC §6): order by (sort value, id) and start strictly after the previous page's
 * last row, a row comparison that PostgreSQL answers with one index range scan. Never OFFSET.
 * Asks for one row more than the page, which tells whether another page exists. The limit is
 * written into the text, not sent as a parameter: a prepared page's plan can then be kept for every
 * run (a generic plan prices `limit $n` as a tenth of the rows, so PostgreSQL would plan it anew
 * each time), and it is an integer the list's schema bounds.
 */
export function keysetPage<DB, TB extends keyof DB, O, Row>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: KeysetPage<Row>,
): SelectQueryBuilder<DB, TB, O> {
  const direction = page.descending ? 'desc' : 'asc';
  const after = keysetCondition(page);
  const paged = after === undefined ? query : query.where(after);
  const rows = page.limit + 1;
  if (!Number.isSafeInteger(rows) || rows < 1) throw new Error(`keyset page: not a row count: ${page.limit}`);
  return paged.orderBy(page.key.expression, direction).orderBy(sql`id`, direction).limit(sql.lit(rows));
}

/** The rows strictly after the previous page's last, in the page's order; undefined on a first page. */
export function keysetCondition(page: KeysetPage<unknown>): RawBuilder<boolean> | undefined {
  if (!page.after) return undefined;
  const comparison = sql.raw(page.descending ? '<' : '>');
  const type = sql.raw(page.key.type);
  return sql<boolean>`(${page.key.expression}, id) ${comparison} (cast(${page.after.value} as ${type}), cast(${page.after.id} as uuid))`;
}

/** Whether a decoded cursor position fits the sort it claims to continue (else the cast would fail in SQL). */
export function fitsSortKey(position: CursorPosition, key: SortKey<unknown>): boolean {
  if (!isUuid(position.id)) return false;
  const { value } = position;
  switch (key.type) {
    case 'integer':
      return Number.isInteger(value) && (value as number) >= INT4_MIN && (value as number) <= INT4_MAX;
    case 'text':
      return typeof value === 'string' && !value.includes('\u0000');
    case 'timestamptz':
      return typeof value === 'string' && (value === '-infinity' || isCanonicalTimestamp(value));
  }
}

const INT4_MIN = -(2 ** 31);
const INT4_MAX = 2 ** 31 - 1;

/** Exactly what `Date#toISOString` writes for a four-digit year: Date.parse alone also takes `2026-02-30`, which PostgreSQL refuses. */
function isCanonicalTimestamp(value: string): boolean {
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(value)) return false;
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString() === value;
}

/**
 * Runs a statement compiled with the camel-case plugin (snake_case SQL) past the plugin: its rows
 * keep the names the SQL gives them. A page has hundreds of rows, and copying each under camelCase
 * names cost as much as a request's own code (bench/results/profile-notes.md). The plugin-less
 * executor is made for each run, not kept per handle: a WeakMap from each request's handle to its
 * plugin-less twin kept every request's handle alive past V8's young collections, to be promoted
 * (W4: 118 → 91 KB promoted a scavenge without it).
 */
export function executeAsNamed<Row>(db: Db, query: CompiledQuery<Row>): Promise<QueryResult<Row>> {
  return db.getExecutor().withoutPlugins().executeQuery(query);
}

/** Runs a page's query with the rows under the names the SQL gives them (executeAsNamed). */
export async function rowsAsNamed<Row>(db: Db, query: Compilable<unknown>): Promise<Row[]> {
  return (await executeAsNamed(db, query.compile() as CompiledQuery<Row>)).rows;
}
