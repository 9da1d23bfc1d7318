import { setTimeout } from 'node:timers/promises';
import { CompiledQuery, sql } from 'kysely';
import type { Db } from './database.js';
import { isTransient } from './errors.js';
import { nameStatement } from './named-statements.js';

/**
 * Runs `work` in a transaction: the caller's, when `handle` is one already (a batch, a conversion),
 * else a new one that commits when `work` resolves and rolls back when it throws. A new one that
 * PostgreSQL aborts to break a deadlock (two batches taking the same keys in another order) is run
 * again: it wrote nothing, and `work` talks to the database only through its transaction.
 */
export function inTransaction<T>(handle: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return handle.isTransaction ? work(handle) : retryingTransient(() => handle.transaction().execute(work));
}

const TRANSIENT_ATTEMPTS = 3;

/** Runs `attempt` again (up to 3 times in all) when the database aborted it as a deadlock victim or a serialization failure. */
export async function retryingTransient<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (tries === TRANSIENT_ATTEMPTS || !isTransient(error)) throw error;
      // The survivor of a deadlock may still hold what this one needs: let it finish first.
      await setTimeout(10 + Math.random() * 50);
    }
  }
}

/**
 * Runs `work` inside a savepoint of the transaction `trx`: when it throws, everything it wrote is
 * undone and the transaction goes on (a failed batch item leaves no trace, SPEC §13). Savepoints
 * of one name nest: each release or rollback names the innermost.
 */
export async function inSavepoint<T>(trx: Db, work: () => Promise<T>): Promise<T> {
  await sql`savepoint funil_step`.execute(trx);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await sql`rollback to savepoint funil_step`.execute(trx);
    await sql`release savepoint funil_step`.execute(trx);
    throw error;
  }
  await sql`release savepoint funil_step`.execute(trx);
  return result;
}

/**
 * Holds a lock on `key` until the transaction `trx` ends: writers of one key (an upsert's tenant,
 * resource, field and value) take turns, on every instance that shares the database. A 64-bit hash
 * of the key names the lock; two keys that share a hash only wait for each other.
 */
export async function lockKey(trx: Db, key: string): Promise<void> {
  await trx.executeQuery(CompiledQuery.raw(LOCK_KEY, [key]));
}

/** Every upsert takes it: prepared once per connection (named-statements.ts). */
const LOCK_KEY = 'select pg_advisory_xact_lock(hashtextextended($1, 0))';
nameStatement(LOCK_KEY);

/**
 * Takes the locks of many keys at once, in the order of their hashes: two transactions that lock
 * overlapping sets this way wait for each other, but never in a circle (a deadlock).
 */
export async function lockKeys(trx: Db, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await sql`
    select pg_advisory_xact_lock(hash)
    from (select hashtextextended(key, 0) as hash from unnest(${keys}::text[]) as key order by 1) as sorted`.execute(
    trx,
  );
}
