import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { tooManyRequests } from '../shared/errors.js';
import { messages } from '../shared/messages.js';
import { principalOf } from './authenticate.js';
import { appendRouteHook, type RouteHandler, wrapRouteHandler } from './route-hooks.js';

/** One request's share of its tenant's cap, held while the request is answered or its handler runs. */
interface Hold {
  readonly tenantId: string;
  refs: number;
}

/**
 * Where a request keeps its hold: on the request. V8 keeps a WeakMap's values, and what they
 * reference, through its young-generation collections until the next full one, whatever becomes
 * of their keys: a WeakMap keyed by requests (as this was) made what each request kept there
 * outlive the request (bench/results/profile-notes.md, issue 21's sixth pass).
 */
const HOLD = Symbol('funil.tenantHold');

declare module 'fastify' {
  interface FastifyRequest {
    [HOLD]: Hold | null;
  }
}

const RETRY_AFTER_SECONDS = 1;

/**
 * Half the database pool, at least 4: one tenant can never hold every connection, and a client
 * with a few parallel workers is not refused. The queries waiting for a connection take turns by
 * tenant besides (db/connection-queue.ts).
 */
export function defaultTenantConcurrency(poolSize: number): number {
  return Math.max(4, Math.ceil(poolSize / 2));
}

/**
 * SPEC §10, fair share: at most `perTenant` requests of one tenant at once on this instance, each
 * authenticated request holding a share until its answer is sent and its handler has ended,
 * whichever is later (the deadline may answer 503 while a query still runs, and that query is
 * still the tenant's). Past the cap, a 429 at once, so that a tenant flooding the service waits in
 * its own queue rather than in everyone's.
 *
 * Installed in a scope after `requireBearerToken`: its hook runs once the tenant is known.
 */
export function capTenantConcurrency(app: FastifyInstance, perTenant: number): void {
  const inUse = new Map<string, number>();
  app.decorateRequest(HOLD, null);

  const take = (tenantId: string) => inUse.set(tenantId, (inUse.get(tenantId) ?? 0) + 1);
  const release = (hold: Hold) => {
    if (--hold.refs > 0) return;
    const left = (inUse.get(hold.tenantId) ?? 1) - 1;
    if (left > 0) inUse.set(hold.tenantId, left);
    else inUse.delete(hold.tenantId);
  };

  const admit: onRequestAsyncHookHandler = async (request, reply) => {
    const { tenantId } = principalOf(request);
    if ((inUse.get(tenantId) ?? 0) >= perTenant) {
      throw tooManyRequests(messages.tenantBusy(RETRY_AFTER_SECONDS), RETRY_AFTER_SECONDS);
    }
    take(tenantId);
    const hold: Hold = { tenantId, refs: 1 };
    request[HOLD] = hold;
    // Emitted once the answer is out or the client has gone, whichever comes first.
    reply.raw.once('close', () => release(hold));
  };

  const holdWhileRunning = (handler: RouteHandler): RouteHandler =>
    async function (this: FastifyInstance, request, reply) {
      const hold = request[HOLD];
      if (hold == null) return handler.call(this, request, reply);
      // A client that left before the handler began has released its share: the handler takes it back.
      if (hold.refs++ === 0) take(hold.tenantId);
      try {
        return await handler.call(this, request, reply);
      } finally {
        release(hold);
      }
    };

  app.addHook('onRoute', (route) => {
    if (route.config?.public) return;
    appendRouteHook(route, 'onRequest', admit);
    wrapRouteHandler(route, holdWhileRunning);
  });
}
