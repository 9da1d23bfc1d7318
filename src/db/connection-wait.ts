import { AsyncLocalStorage } from 'node:async_hooks';
import type { PoolClient } from 'pg';

/** What one request may still spend waiting for database connections, over all its queries. */
interface WaitBudget {
  leftMs: number;
}

const budgets = new AsyncLocalStorage<WaitBudget>();

/**
 * Runs `work` (a request's whole life) with `limitMs` to wait for database connections in all: a
 * request that needs several connections in turn (its token's lookup, then its query) waits at
 * most that much in total, not that much for each (SPEC §10: bounded waiting).
 */
export function withConnectionWaitBudget<T>(limitMs: number, work: () => T): T {
  return budgets.run({ leftMs: limitMs }, work);
}

/**
 * Runs `work` free of the current request's budget, bound by the pool's own timeout alone: for the
 * bookkeeping that must happen however long the request waited (recording an idempotent outcome).
 */
export function withoutConnectionWaitBudget<T>(work: () => T): T {
  return budgets.exit(work);
}

/** Read as pg-pool's own timeout is (`isDatabaseUnavailable`): a 503. */
export class ConnectionWaitTimeout extends Error {
  constructor() {
    super('timeout exceeded when trying to connect: the request spent its wait for a database connection');
    this.name = 'ConnectionWaitTimeout';
  }
}

/**
 * Takes a connection within what the current request has left to wait (outside a request, the
 * pool's own timeout is the only bound). A connection that arrives after the request gave up on it
 * goes straight back to the pool.
 */
export async function connectWithinBudget(connect: () => Promise<PoolClient>): Promise<PoolClient> {
  const budget = budgets.getStore();
  if (budget === undefined) return connect();
  if (budget.leftMs <= 0) throw new ConnectionWaitTimeout();
  const started = performance.now();
  const pending = connect();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConnectionWaitTimeout()), budget.leftMs);
  });
  try {
    return await Promise.race([pending, timeout]);
  } catch (error) {
    if (error instanceof ConnectionWaitTimeout)
      pending.then(
        (client) => client.release(),
        () => {},
      );
    throw error;
  } finally {
    clearTimeout(timer);
    budget.leftMs -= performance.now() - started;
  }
}
