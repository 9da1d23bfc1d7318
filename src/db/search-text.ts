import { type RawBuilder, sql } from 'kysely';

/** What joins the searched columns: a character a search for text does not hold. */
export const SEARCH_SEPARATOR = '\x1f';

/**
 * What `q`'s trigram index holds (migration 2026-11-25T1200): the searched columns joined by
 * U+001F. A query uses the index only when it spells the expression exactly as the index does.
 */
export function searchText(columns: readonly string[]): RawBuilder<string> {
  return sql.raw<string>(`(${columns.map((column) => `coalesce(${column}, '')`).join(` || E'\\x1f' || `)})`);
}
