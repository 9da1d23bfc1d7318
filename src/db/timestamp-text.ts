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

const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date | null;

/** PostgreSQL's text of a timestamp as the API writes it: exactly what `Date#toISOString` would. */
export function isoFromTimestampText(text: string): string;
export function isoFromTimestampText(text: string | null): string | null;
export function isoFromTimestampText(text: string | null): string | null {
  if (text === null) return null;
  // Another time zone or an unusual value: the slow way, as node-postgres reads it.
  return isoFromUtcText(text) ?? (parseTimestamptz(text) ?? new Date(text)).toISOString();
}

const [DIGIT_0, DIGIT_9, DASH, COLON, DOT, SPACE, LETTER_T] = [0x30, 0x39, 0x2d, 0x3a, 0x2e, 0x20, 0x54];
/** `YYYY-MM-DD HH:MM:SS`: where its digits are. */
const DIGITS_AT = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
/** What the milliseconds need after their digits (none, 1, 2 or 3 of them) to be three. */
const MILLIS_PADDING = ['.000', '00', '0', ''];

/**
 * PostgreSQL's text of a UTC timestamp with at most millisecond precision (the session runs in
 * UTC), as a column's text (`2026-11-21 17:05:40.5+00`) or in JSON (`2026-11-21T17:05:40.5+00:00`);
 * undefined for any other text. Read character by character: a list has hundreds of timestamps,
 * and a regular expression's match is several strings and an array for each
 * (bench/results/profile-notes.md).
 */
function isoFromUtcText(text: string): string | undefined {
  const zone = text.endsWith('+00') ? 3 : text.endsWith('+00:00') ? 6 : 0;
  const end = text.length - zone;
  const millis = end === 19 ? 0 : end - 20;
  if (zone === 0 || millis < 0 || millis > 3) return undefined;
  if (end !== 19 && (millis === 0 || text.charCodeAt(19) !== DOT)) return undefined;
  const separator = text.charCodeAt(10);
  if (separator !== SPACE && separator !== LETTER_T) return undefined;
  if (text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return undefined;
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return undefined;
  for (const at of DIGITS_AT) if (!isDigit(text.charCodeAt(at))) return undefined;
  for (let at = 20; at < end; at++) if (!isDigit(text.charCodeAt(at))) return undefined;
  return `${text.slice(0, 10)}T${text.slice(11, end)}${MILLIS_PADDING[millis]}Z`;
}

function isDigit(code: number): boolean {
  return code >= DIGIT_0 && code <= DIGIT_9;
}

/** A timestamp as the API writes it, from a Date or from PostgreSQL's text of it. */
export function toIso(date: Date | string): string;
export function toIso(date: Date | string | null): string | null;
export function toIso(date: Date | string | null): string | null {
  if (date === null) return null;
  return typeof date === 'string' ? isoFromTimestampText(date) : date.toISOString();
}
