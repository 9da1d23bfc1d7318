import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { authMessages } from '../auth/auth.messages.js';
import { bearerOf, secretsEqual } from '../auth/token-secret.js';
import type { Database, PoolStats } from '../db/database.js';
import { forbidden } from '../shared/errors.js';

/** The route label of a request that matched no route: raw URLs would make a label per probe. */
const metricsTokenInvalid = { pt: 'Token de métricas inválido.', en: 'Invalid metrics token.' };

export const UNMATCHED_ROUTE = 'unmatched';

declare module 'fastify' {
  interface FastifyInstance {
    /** The registry `GET /metrics` reads: parts of the app add their own metrics to it. */
    metricsRegistry: Registry;
  }
}

export interface MetricsOptions {
  database: Database;
  /** When set, scrapes must send `Authorization: Bearer <token>`. */
  token: string | undefined;
}

/**
 * SPEC §12: `GET /metrics` in the Prometheus text format, with no auth (unless a token is
 * configured) and no rate limit, like the probes. Each app has a registry of its own, so apps
 * built side by side (tests) never share counters.
 */
export const metrics = fp<MetricsOptions>(
  async (app, { database, token }) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    countRequests(app, registry);
    gaugePool(registry, database);
    app.decorate('metricsRegistry', registry);

    const onRequest = token === undefined ? [] : [requireMetricsToken(token)];
    // Never shed: an overloaded process is exactly when its metrics are wanted.
    const config = { public: true, neverShed: true };
    app.get('/metrics', { schema: { hide: true }, config, onRequest }, async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'funil-metrics' },
);

const LABELS = ['method', 'route', 'status'] as const;

/** Labelled by route template (`/api/external/v1/leads/:id`), never by the raw URL. */
function countRequests(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'funil_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: LABELS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'funil_http_request_duration_seconds',
    help: 'Time from the request received to the answer sent, by method, route template and status.',
    labelNames: LABELS,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      status: String(reply.statusCode),
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}

function gaugePool(registry: Registry, database: Database): void {
  const gauge = (name: string, help: string, read: (stats: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['backend'],
      registers: [registry],
      collect() {
        this.set({ backend: database.backend }, read(database.stats()));
      },
    });
  gauge('funil_db_pool_max_connections', 'Connections the database pool may open (PGlite: one).', (s) => s.max);
  gauge('funil_db_pool_connections', 'Database connections open, busy or idle.', (s) => s.total);
  gauge('funil_db_pool_idle_connections', 'Database connections open and idle.', (s) => s.idle);
  gauge('funil_db_pool_waiting_queries', 'Queries waiting for a free database connection.', (s) => s.waiting);
}

function requireMetricsToken(token: string): onRequestHookHandler {
  return async (request) => {
    const presented = bearerOf(request.headers.authorization);
    if (presented === undefined) throw forbidden(authMessages.tokenMissing);
    if (!secretsEqual(presented, token)) throw forbidden(metricsTokenInvalid);
  };
}
