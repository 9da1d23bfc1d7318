import type { PoolClient } from 'pg';
import { type ConnectionQueue, ConnectionWaitTimeout } from './connection-queue.js';

/** Work of no tenant nor token (admin requests, bookkeeping, background jobs) waits in one line of its own. */
const NO_TENANT = '';

/**
 * What one request may still spend waiting for database connections, over all its queries, and
 * whose turn it takes (SPEC §10: bounded waiting). A request that needs several connections in
 * turn (its token's lookup, then its query) waits at most that much in total, not that much for
 * each. It travels with the request's database handle (Database.within), not in an async context:
 * on Node 20 and 22 an AsyncLocalStorage makes every promise of the process pay an async hook
 * (bench/results/profile-notes.md).
 */
export class WaitBudget {
  /** Whose line its connections wait in (ConnectionQueue's turns): its tenant's once it is authenticated, its token's while the token is looked up. */
  party = NO_TENANT;

  constructor(public leftMs: number) {}
}

/** pg-pool, as far as a checkout reads it. */
export interface ConnectionSource {
  connect(): Promise<PoolClient>;
  /** Connections open and free. */
  readonly idleCount: number;
  /** Checkouts the pool has not served yet. */
  readonly waitingCount: number;
}

/**
 * Takes a connection, in the turn of `budget`'s line (connection-queue.ts) and within what it has
 * left to wait. The queue's place goes with the connection and comes back when it is released. A
 * connection that arrives after the request gave up on it goes straight back to the pool.
 */
export function connectWithinBudget(
  queue: ConnectionQueue,
  pool: ConnectionSource,
  budget: WaitBudget,
): Promise<PoolClient> {
  if (budget.leftMs <= 0) return Promise.reject(new ConnectionWaitTimeout());
  // As usual below capacity: a place free, and a connection idle for it once the pool has served
  // the checkouts asked before (it hands them over on its next tick, before any timer or I/O can
  // take one). Nothing to wait for, so no wait to time: no timer, and two promises where waiting
  // makes eight.
  if (pool.idleCount > pool.waitingCount && queue.tryEnter()) return placed(queue, pool.connect());
  return waitForConnection(queue, pool, budget);
}

async function waitForConnection(queue: ConnectionQueue, pool: ConnectionSource, budget: WaitBudget) {
  const started = performance.now();
  try {
    await queue.enter(budget.party, budget.leftMs);
    return await placed(
      queue,
      withinMs(() => pool.connect(), budget.leftMs - (performance.now() - started)),
    );
  } finally {
    budget.leftMs -= performance.now() - started;
  }
}

/** The connection `pending` brings, holding the queue's place taken for it; the place goes back if none comes. */
function placed(queue: ConnectionQueue, pending: Promise<PoolClient>): Promise<PoolClient> {
  return pending.then(
    (client) => {
      // pg-pool sets `release` afresh at every checkout, so this wraps this checkout's only.
      const release = client.release;
      const since = performance.now();
      let released = false;
      client.release = (error?: Error | boolean) => {
        if (!released) {
          released = true;
          queue.leave(performance.now() - since);
        }
        return release(error);
      };
      return client;
    },
    (error: unknown) => {
      queue.leave();
      throw error;
    },
  );
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
