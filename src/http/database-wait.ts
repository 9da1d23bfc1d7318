import { AsyncResource } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';
import { withConnectionWaitBudget } from '../db/connection-wait.js';

/** Where a request keeps its async context: on the request, not in a WeakMap (see tenant-share.ts's HOLD). */
const SCOPE = Symbol('funil.requestScope');

declare module 'fastify' {
  interface FastifyRequest {
    [SCOPE]: AsyncResource | null;
  }
}

/**
 * SPEC §10, bounded waiting: every request may wait `limitMs` in all for database connections,
 * then gets 503 with `Retry-After` (db/connection-wait.ts). The budget lives in the request's async
 * context; the body arrives on the socket's events, outside it, so the hooks that follow the
 * parsing are put back into it.
 */
export function boundDatabaseWaits(app: FastifyInstance, limitMs: number): void {
  app.decorateRequest(SCOPE, null);
  app.addHook('onRequest', (request, _reply, done) => {
    withConnectionWaitBudget(limitMs, () => {
      request[SCOPE] = new AsyncResource('funil.request');
      done();
    });
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const scope = request[SCOPE];
    if (scope) scope.runInAsyncScope(done);
    else done();
  });
}
