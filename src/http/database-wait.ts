import type { FastifyInstance } from 'fastify';
import { WaitBudget } from '../db/connection-wait.js';
import type { Database, Db } from '../db/database.js';

/** Where a request keeps its budget and its handle, once made. */
const BUDGET = Symbol('funil.waitBudget');
const HANDLE = Symbol('funil.requestDb');

declare module 'fastify' {
  interface FastifyRequest {
    /** What the request may still wait for database connections, and in whose line. */
    readonly waitBudget: WaitBudget;
    /** The request's database handle: its connections are taken within `waitBudget`. */
    readonly db: Db;
    [BUDGET]: WaitBudget | undefined;
    [HANDLE]: Db | undefined;
  }
}

/**
 * SPEC §10, bounded waiting: every request may wait `limitMs` in all for database connections,
 * then gets 503 with `Retry-After` (db/connection-wait.ts). Its queries go through `request.db`;
 * work done for no request uses `database.db`. Both are made the first time they are read: the
 * budget counts only time spent waiting for a checkout, and a request that needs no connection (a
 * known token, a refusal) makes no handle.
 */
export function boundDatabaseWaits(app: FastifyInstance, database: Database, limitMs: number): void {
  app.decorateRequest(BUDGET, undefined);
  app.decorateRequest(HANDLE, undefined);
  app.decorateRequest('waitBudget', {
    getter(this: { [BUDGET]: WaitBudget | undefined }) {
      this[BUDGET] ??= new WaitBudget(limitMs);
      return this[BUDGET];
    },
  });
  app.decorateRequest('db', {
    getter(this: { readonly waitBudget: WaitBudget; [HANDLE]: Db | undefined }) {
      this[HANDLE] ??= database.within(this.waitBudget);
      return this[HANDLE];
    },
  });
}
