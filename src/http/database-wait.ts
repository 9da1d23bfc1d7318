import { AsyncResource } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { withConnectionWaitBudget } from '../db/connection-wait.js';

/**
 * SPEC §10, bounded waiting: every request may wait `limitMs` in all for database connections,
 * then gets 503 with `Retry-After` (db/connection-wait.ts). The budget lives in the request's async
 * context; the body arrives on the socket's events, outside it, so the hooks that follow the
 * parsing are put back into it.
 */
export function boundDatabaseWaits(app: FastifyInstance, limitMs: number): void {
  const scopes = new WeakMap<FastifyRequest, AsyncResource>();
  app.addHook('onRequest', (request, _reply, done) => {
    withConnectionWaitBudget(limitMs, () => {
      scopes.set(request, new AsyncResource('funil.request'));
      done();
    });
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const scope = scopes.get(request);
    if (scope) scope.runInAsyncScope(done);
    else done();
  });
}
