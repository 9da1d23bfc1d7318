import type { FastifyInstance } from 'fastify';
import { WaitBudget } from '../db/connection-wait.js';
import type { Database, Db } from '../db/database.js';

/** Where a request keeps its handle once made. */
const HANDLE = Symbol('funil.requestDb');

declare module 'fastify' {
  interface FastifyRequest {
    /** What the request may still wait for database connections, and in whose line. */
    waitBudget: WaitBudget;
    /** The request's database handle: its connections are taken within `waitBudget`. */
    readonly db: Db;
    [HANDLE]: Db | undefined;
  }
}

/**
 * SPEC §10, bounded waiting: every request may wait `limitMs` in all for database connections,
 * then gets 503 with `Retry-After` (db/connection-wait.ts). Its queries go through `request.db`,
 * made the first time it is read; work done for no request uses `database.db`.
 */
export function boundDatabaseWaits(app: FastifyInstance, database: Database, limitMs: number): void {
  app.decorateRequest('waitBudget', null as unknown as WaitBudget);
  app.decorateRequest(HANDLE, undefined);
  app.decorateRequest('db', {
    getter(this: { waitBudget: WaitBudget; [HANDLE]: Db | undefined }) {
      this[HANDLE] ??= database.within(this.waitBudget);
      return this[HANDLE];
    },
  });
  app.addHook('onRequest', (request, _reply, done) => {
    request.waitBudget = new WaitBudget(limitMs);
    done();
  });
}
