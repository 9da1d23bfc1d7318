import { type RawBuilder, sql } from 'kysely';

/**
 * What `q`'s trigram index holds (migration 2026-11-25T1200): the searched columns joined in one
 * text. A query uses the index only when it spells the expression exactly as the index does.
 */
export function searchText(columns: readonly string[]): RawBuilder<string> {
  return sql.raw<string>(`(${columns.map((column) => `coalesce(${column}, '')`).join(` || ' ' || `)})`);
}
