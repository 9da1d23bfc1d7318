import { AsyncLocalStorage } from 'node:async_hooks';
import type { PoolClient } from 'pg';
import { type ConnectionQueue, ConnectionWaitTimeout } from './connection-queue.js';

/** What one request may still spend waiting for database connections, over all its queries, and whose turn it takes. */
interface WaitBudget {
  leftMs: number;
  /** Whose line its connections wait in (ConnectionQueue's turns): its tenant's, once known. */
  party: string;
}

const budgets = new AsyncLocalStorage<WaitBudget>();

/** Work of no tenant nor token (admin requests, bookkeeping, background jobs) waits in one line of its own. */
const NO_TENANT = '';

/**
 * Runs `work` (a request's whole life) with `limitMs` to wait for database connections in all: a
 * request that needs several connections in turn (its token's lookup, then its query) waits at
 * most that much in total, not that much for each (SPEC §10: bounded waiting).
 */
export function withConnectionWaitBudget<T>(limitMs: number, work: () => T): T {
  return budgets.run({ leftMs: limitMs, party: NO_TENANT }, work);
}

/**
 * The current request's connections wait in `party`'s line from now on: its tenant's once it is
 * authenticated, its token's while the token is looked up.
 */
export function waitInLineOf(party: string): void {
  const budget = budgets.getStore();
  if (budget !== undefined) budget.party = party;
}

/**
 * Runs `work` free of the current request's budget, bound by the pool's own timeout alone: for the
 * bookkeeping that must happen however long the request waited (recording an idempotent outcome).
 */
export function withoutConnectionWaitBudget<T>(work: () => T): T {
  return budgets.exit(work);
}

/**
 * Takes a connection, in the turn of the current request's line (connection-queue.ts) and within
 * what the request has left to wait (outside a request, within `unbudgetedWaitMs`). The queue's
 * place goes with the connection and comes back when it is released. A connection that arrives
 * after the request gave up on it goes straight back to the pool.
 */
export async function connectWithinBudget(
  queue: ConnectionQueue,
  connect: () => Promise<PoolClient>,
  unbudgetedWaitMs: number,
): Promise<PoolClient> {
  // Outside a request, a budget of its own for this one connection: the wait in the queue and the
  // pool's connecting together, as the pool's own timeout would bound them.
  const budget = budgets.getStore() ?? { leftMs: unbudgetedWaitMs, party: NO_TENANT };
  if (budget.leftMs <= 0) throw new ConnectionWaitTimeout();
  const started = performance.now();
  try {
    return await checkedOut(queue, budget.party, budget.leftMs, () =>
      withinMs(connect, budget.leftMs - (performance.now() - started)),
    );
  } finally {
    budget.leftMs -= performance.now() - started;
  }
}

async function checkedOut(
  queue: ConnectionQueue,
  party: string,
  waitMs: number,
  connect: () => Promise<PoolClient>,
): Promise<PoolClient> {
  await queue.enter(party, waitMs);
  let client: PoolClient;
  try {
    client = await connect();
  } catch (error) {
    queue.leave();
    throw error;
  }
  // pg-pool sets `release` afresh at every checkout, so this wraps this checkout's only.
  const release = client.release;
  let released = false;
  client.release = (error?: Error | boolean) => {
    if (!released) {
      released = true;
      queue.leave();
    }
    return release(error);
  };
  return client;
}

/** `connect()`, or ConnectionWaitTimeout after `ms`; a connection that comes later goes back to the pool. */
async function withinMs(connect: () => Promise<PoolClient>, ms: number): Promise<PoolClient> {
  const pending = connect();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConnectionWaitTimeout()), Math.max(0, ms));
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
  }
}
