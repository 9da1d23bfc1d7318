import { type Expression, type SqlBool, sql } from 'kysely';

/**
 * The versions an `If-Match` allows a write to apply to (SPEC §8); `undefined` sets no condition.
 * An empty list matches no version at all (only weak or malformed tags were sent).
 */
export type ExpectedVersions = readonly number[] | undefined;

/** The row exists, but not in a version the client named. */
export class PreconditionFailedError extends Error {
  constructor() {
    super('the record has changed since the client read it');
  }
}

/**
 * Runs a conditional write and tells a stale version (throws) from a missing row (undefined).
 * The condition is part of the write's own statement; `exists` only picks the answer after a miss.
 */
export async function conditionalWrite<T>(
  expected: ExpectedVersions,
  write: () => Promise<T | undefined>,
  exists: () => Promise<boolean>,
): Promise<T | undefined> {
  const row = expected?.length === 0 ? undefined : await write();
  if (row !== undefined || expected === undefined) return row;
  if (await exists()) throw new PreconditionFailedError();
  return undefined;
}

/** `version = any($n)`: one parameter however many versions the If-Match lists, so one statement text. */
export function versionIn(versions: readonly number[] | undefined): Expression<SqlBool> {
  return sql<SqlBool>`version = any(${versions})`;
}
