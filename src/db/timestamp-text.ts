import { type RawBuilder, sql } from 'kysely';
import pg from 'pg';

/**
 * A timestamp column as PostgreSQL's own text (`2026-11-21 17:05:40.5+00`). Lists read their
 * timestamps this way: node-postgres would otherwise build a Date for each one, only for the API
 * to write it back as the same text (bench/results/profile-notes.md).
 */
export function timestampText<Text extends string | null = string>(column: string): RawBuilder<Text> {
  return sql<Text>`${sql.ref(column)}::text`;
}

/**
 * PostgreSQL's text of a UTC timestamp with at most millisecond precision (the session runs in
 * UTC), as a column's text (`2026-11-21 17:05:40.5+00`) or in JSON (`2026-11-21T17:05:40.5+00:00`).
 */
const UTC_TEXT = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,3}))?\+00(?::00)?$/;
const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date | null;

/** PostgreSQL's text of a timestamp as the API writes it: exactly what `Date#toISOString` would. */
export function isoFromTimestampText(text: string): string;
export function isoFromTimestampText(text: string | null): string | null;
export function isoFromTimestampText(text: string | null): string | null {
  if (text === null) return null;
  const utc = UTC_TEXT.exec(text);
  if (utc) return `${utc[1]}T${utc[2]}.${(utc[3] ?? '').padEnd(3, '0')}Z`;
  // Another time zone or an unusual value: the slow way, as node-postgres reads it.
  return (parseTimestamptz(text) ?? new Date(text)).toISOString();
}

/** A timestamp as the API writes it, from a Date or from PostgreSQL's text of it. */
export function toIso(date: Date | string): string;
export function toIso(date: Date | string | null): string | null;
export function toIso(date: Date | string | null): string | null {
  if (date === null) return null;
  return typeof date === 'string' ? isoFromTimestampText(date) : date.toISOString();
}
