/** PostgreSQL error codes Funil maps to answers (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
const UNIQUE_VIOLATION = '23505';
const CHECK_VIOLATION = '23514';
const INVALID_TEXT = new Set(['22021', '22P05']);
// 40P01 and 40001 are left after their retries (inTransaction): the client may retry as well.
const UNAVAILABLE = new Set([
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
  '53300',
  '57014',
  '40P01',
  '40001',
]);
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

interface PgError {
  code?: unknown;
  constraint?: unknown;
  column?: unknown;
  message?: unknown;
}

export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as PgError;
  return e?.code === UNIQUE_VIOLATION && e.constraint === constraint;
}

export function isCheckViolation(error: unknown, constraint: string): boolean {
  const e = error as PgError;
  return e?.code === CHECK_VIOLATION && e.constraint === constraint;
}

/** The column a check violation names, when its raiser named one (a trigger's `raise … using column`). */
export function checkViolationColumn(error: unknown): string | undefined {
  const column = (error as PgError)?.column;
  return typeof column === 'string' ? column : undefined;
}

/** PostgreSQL aborted the transaction to break a deadlock, or as a serialization failure: running it again may succeed. */
export function isTransient(error: unknown): boolean {
  const code = (error as PgError)?.code;
  return code === '40P01' || code === '40001';
}

/** A lock not had within the transaction's `lock_timeout` (55P03): the statement gave way to its holder. */
export function isLockNotAvailable(error: unknown): boolean {
  return (error as PgError)?.code === '55P03';
}

/**
 * Another transaction made the same object at the same moment: a deadlock between the two, its
 * unique key taken, or its table there (40P01, 23505, 42P07). Looking again finds it made.
 */
export function isMadeConcurrently(error: unknown): boolean {
  return MADE_CONCURRENTLY.has(String((error as PgError)?.code));
}

const MADE_CONCURRENTLY = new Set(['40P01', UNIQUE_VIOLATION, '42P07']);

/** The database refused the data of a statement (SQLSTATE classes 22 and 23: a value, a constraint), not the statement's running. */
export function isRefusedData(error: unknown): boolean {
  return /^2[23]/.test(String((error as PgError)?.code));
}

/** Text PostgreSQL cannot store: the NUL character, invalid byte sequences. */
export function isInvalidTextError(error: unknown): boolean {
  return INVALID_TEXT.has(String((error as PgError)?.code));
}

/** The database is down, restarting, overloaded or too slow: a 503, not a 500. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as PgError;
  const code = String(e?.code);
  if (UNAVAILABLE.has(code) || NETWORK_ERRORS.has(code)) return true;
  const message = String(e?.message ?? '');
  // pg-pool and pg say so only in words; the last two are a pool ended by a shutdown under way.
  return /timeout exceeded when trying to connect|Connection terminated|connection timeout|Client has encountered a connection error|Cannot use a pool after calling end|driver has already been destroyed/i.test(
    message,
  );
}
