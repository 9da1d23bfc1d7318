import { type RawBuilder, sql } from 'kysely';

/** A timestamp as the API writes it, `Date#toISOString` to the letter (stored with millisecond precision). */
export function isoTimestamp(column: string): RawBuilder<string | null> {
  return sql<string | null>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * One row as the JSON text of an API object, written by PostgreSQL: exactly the keys given, in
 * their order, and nothing else. A list then sends PostgreSQL's text as it is, instead of
 * decoding each row into objects and Dates and encoding them again (bench/results/profile-notes.md).
 *
 * `row_to_json` of a one-row subselect, not `json_build_object`: that one writes `"key" : value`
 * with spaces, and the answer would not be byte-for-byte what the schema serialiser writes.
 */
export function jsonItem<Item>(fields: { readonly [K in keyof Item]-?: RawBuilder<unknown> }): RawBuilder<string> {
  const columns = Object.entries<RawBuilder<unknown>>(fields).map(([key, expression]) => {
    // The keys are this codebase's constants; checked anyway, since they go into the SQL as they are.
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`not a plain JSON key: ${key}`);
    return sql`${expression} as ${sql.raw(`"${key}"`)}`;
  });
  return sql<string>`(select row_to_json(item) from (select ${sql.join(columns)}) item)::text`;
}
