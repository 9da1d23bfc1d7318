import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RawBuilder, sql } from 'kysely';
import type { Database } from '../../src/db/database.js';

/**
 * Takes one of the database's connections in a transaction and keeps it until the returned function
 * is called (which resolves once the transaction has ended). On a pool of one, every other query waits.
 * `first` is the transaction's statement (`select pg_current_xact_id()` gives it a transaction id,
 * which holds the change feed's newest events back).
 */
export async function holdConnection(
  database: Database,
  first: RawBuilder<unknown> = sql`select 1`,
): Promise<() => Promise<void>> {
  let letGo!: () => void;
  const released = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  let holding!: () => void;
  const taken = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const transaction = database.db.transaction().execute(async (trx) => {
    await first.execute(trx);
    holding();
    await released;
  });
  await taken;
  return () => {
    letGo();
    return transaction;
  };
}

/** Resolves once `count` queries wait for a connection (fails after 5 s). */
export async function waitingReaches(database: Database, count: number): Promise<void> {
  for (let i = 0; database.stats().waiting < count; i++) {
    assert.ok(i < 500, `${database.stats().waiting} queries wait for a connection, not ${count}`);
    await sleep(10);
  }
}
