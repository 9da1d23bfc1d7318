import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import { tooManyRequests } from '../shared/errors.js';
import { messages } from '../shared/messages.js';
import { principalOf } from './authenticate.js';
import { whenClosed } from './response-closed.js';
import { appendRouteHook, type RouteHandler, wrapRouteHandler } from './route-hooks.js';
import type { Place, TenantLines } from './tenant-lines.js';

/** One request's place in its tenant's line, given back once its answer is out and its handler has ended. */
interface Hold {
  readonly place: Place;
  refs: number;
  /**
   * The status the answer went out with, once it has: a handler that ends after the deadline's
   * 503 still sets the status of its own outcome, which was never sent.
   */
  sentStatus?: number;
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
 * Half the database pool, at least 2, requests of one tenant served at once on an instance: one
 * tenant never holds every connection, and on the embedded database (one connection, taken in
 * turns by tenant) a tenant's next request is ready the moment its last query ends.
 */
export function defaultTenantShare(poolSize: number): number {
  return Math.max(2, Math.ceil(poolSize / 2));
}

/**
 * Requests served at once on an instance, all tenants together: as many as the pool has
 * connections on PostgreSQL, 4 on the embedded database, whose queries run on this process's one
 * thread. Past it, the work in progress only shares the same cores more thinly, and every answer
 * comes later: 200 readers of pages of 1,000 on two cores answered writers at p99 2.2 s with twice
 * the pool in service, 1.1–1.3 s with the pool (bench:overload, issue 39).
 */
export function defaultRequestConcurrency(backend: 'pglite' | 'postgres', poolSize: number): number {
  return backend === 'postgres' ? poolSize : 4;
}

export interface TenantShareOptions {
  /** Called before a refusal is thrown, to put on it what every answer carries (the token's rate-limit counters). */
  beforeRefusal?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

/**
 * SPEC §10, fair share by waiting in line (tenant-lines.ts). Once the tenant is known, a request
 * gets a place in its tenant's line, or a 429 at once when the line is full or too slow; then,
 * its body read and checked, it waits for service, within its budget for waiting (a 503 past it),
 * before the handler and anything else that touches the database. The place is given back once
 * the answer is out and the handler has ended, whichever is later (the deadline may answer 503
 * while a query still runs, and that query is still the tenant's).
 *
 * Installed in a scope after `requireBearerToken`: its hook runs once the tenant is known.
 */
export function shareByTenantLines(app: FastifyInstance, lines: TenantLines, options: TenantShareOptions = {}): void {
  app.decorateRequest(HOLD, null);
  const refusals = app.hasDecorator('metricsRegistry') ? measureLines(app.metricsRegistry, lines) : undefined;

  const release = (hold: Hold, reply: FastifyReply) => {
    if (--hold.refs === 0) hold.place.leave((hold.sentStatus ?? reply.statusCode) !== 503);
  };

  const join: onRequestAsyncHookHandler = async (request, reply) => {
    const place = lines.join(principalOf(request).tenantId);
    if (place === 'full' || place === 'slow') {
      refusals?.inc({ reason: place });
      await options.beforeRefusal?.(request, reply);
      throw tooManyRequests(messages.tenantLineFull(RETRY_AFTER_SECONDS), RETRY_AFTER_SECONDS);
    }
    const hold: Hold = { place, refs: 1 };
    request[HOLD] = hold;
    // Once the answer is out or the client has gone, whichever comes first; at once if the client
    // has gone already: whatever of its request still runs, runs outside the line.
    whenClosed(reply.raw, () => {
      hold.sentStatus = reply.statusCode;
      release(hold, reply);
    });
  };

  const waitForService: preHandlerAsyncHookHandler = async (request) => {
    const hold = request[HOLD];
    const waiting = hold?.place.serve(request.waitBudget.leftMs);
    if (waiting === undefined) return;
    const started = performance.now();
    try {
      await waiting;
    } finally {
      // The line is part of the wait for connections: what is spent here is not spent again there.
      request.waitBudget.leftMs -= performance.now() - started;
    }
  };

  const holdWhileRunning = (handler: RouteHandler): RouteHandler =>
    async function (this: FastifyInstance, request, reply) {
      const hold = request[HOLD];
      if (hold == null || hold.refs === 0) return handler.call(this, request, reply);
      hold.refs++;
      try {
        return await handler.call(this, request, reply);
      } finally {
        release(hold, reply);
      }
    };

  app.addHook('onRoute', (route) => {
    if (route.config?.public) return;
    appendRouteHook(route, 'onRequest', join);
    appendRouteHook(route, 'preHandler', waitForService);
    wrapRouteHandler(route, holdWhileRunning);
  });
}

/** On /metrics: the requests in service and waiting in the tenants' lines, and the refusals by reason. */
function measureLines(registry: Registry, lines: TenantLines): Counter<'reason'> {
  for (const state of ['serving', 'waiting'] as const) {
    new Gauge({
      name: `funil_tenant_line_${state}_requests`,
      help: `Requests ${state === 'serving' ? 'served' : "waiting in their tenants' lines"} on this instance (fair share).`,
      registers: [registry],
      collect() {
        this.set(lines.totals()[state]);
      },
    });
  }
  return new Counter({
    name: 'funil_tenant_line_refusals_total',
    help: "Requests refused at once (429) by fair share: the tenant's line was full, or too slow to answer within the bound.",
    labelNames: ['reason'],
    registers: [registry],
  });
}
