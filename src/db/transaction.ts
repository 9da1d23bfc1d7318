import { sql } from 'kysely';
import type { Db } from './database.js';

/**
 * Runs `work` in a transaction: the caller's, when `handle` is one already (a batch, a conversion),
 * else a new one that commits when `work` resolves and rolls back when it throws.
 */
export function inTransaction<T>(handle: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return handle.isTransaction ? work(handle) : handle.transaction().execute(work);
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
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}
