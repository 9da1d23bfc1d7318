import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import { adminRoutes } from './admin/admin.routes.js';
import { requireAdminToken } from './admin/admin-auth.plugin.js';
import { ADMIN_DOCUMENT, ADMIN_PREFIX, EXTERNAL_DOCUMENT, EXTERNAL_PREFIX } from './api-documents.js';
import { keepPresentedTokens } from './auth/presented-token.js';
import { tokenRoutes } from './auth/token.routes.js';
import type { Config } from './config.js';
import { serveConsole } from './console/console.routes.js';
import { customerMessages } from './customers/customer.messages.js';
import { customerRoutes } from './customers/customer.routes.js';
import { Customer } from './customers/customer.schemas.js';
import { appSecret } from './db/app-secrets.js';
import type { Database } from './db/database.js';
import { duplicateRoutes } from './duplicates/duplicate.routes.js';
import { eventRoutes } from './events/event.routes.js';
import { EVENT_FILTER_SCHEMAS } from './events/event-filter.schemas.js';
import { exportRoutes } from './exports/export.routes.js';
import { customFieldRoutes } from './fields/custom-field.routes.js';
import { Answering } from './http/answering.js';
import { requireBearerToken } from './http/authenticate.js';
import { answerClientError } from './http/client-errors.js';
import { allowCrossOrigin } from './http/cors.js';
import { boundDatabaseWaits } from './http/database-wait.js';
import { installDraining } from './http/drain.js';
import { installErrorHandling, renderFrameworkError } from './http/error-handler.js';
import { healthRoutes } from './http/health.routes.js';
import { rejectMalformedIds } from './http/id-param.js';
import { shedLoad } from './http/load-shedding.js';
import { metrics } from './http/metrics.js';
import { describeApi, serveDocsPage } from './http/openapi.js';
import { limitRateByAddress, limitRateByToken, openRateLimitStore } from './http/rate-limit.js';
import { limitRequestTime } from './http/request-deadline.js';
import { installJsonParser, installRequestHooks } from './http/request-hooks.js';
import { requestIdOf } from './http/request-id.js';
import { cachedSerializers } from './http/serializer-cache.js';
import { TenantLines } from './http/tenant-lines.js';
import { defaultRequestConcurrency, defaultTenantShare, shareByTenantLines } from './http/tenant-share.js';
import { turnsIn } from './http/tenant-turn.js';
import { honourIdempotencyKeys } from './idempotency/idempotency.plugin.js';
import { importRoutes } from './imports/import.routes.js';
import { leadMessages } from './leads/lead.messages.js';
import { leadRoutes } from './leads/lead.routes.js';
import { mcpRoutes } from './mcp/mcp.routes.js';
import { mergeRoutes } from './merges/merge.routes.js';
import { pipelineRoutes } from './pipelines/pipeline.routes.js';
import { personalDataRoutes } from './privacy/personal-data.routes.js';
import { CursorCodec } from './records/cursor.js';
import { buildServices } from './services.js';
import { buildValidatorCompiler } from './shared/validation.js';
import { webhookRoutes } from './webhooks/webhook.routes.js';
import { workers } from './workers.js';

const ONE_MIB = 1024 * 1024;
/** Longer than the 60 s idle timeout of common load balancers, so that they, not we, close idle connections. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** A client gets this long to send its headers, and this long to send a whole request (1 MiB at most). */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Fastify 5 ignores a bare hop count (it cannot tell a proxy from a client that forged the header),
 * so the count becomes the function Express uses: the `n` nearest senders are proxies. Right only
 * when nothing reaches Funil but through them; the README says so, and prefers addresses.
 */
function trustedProxies(trust: Config['trustProxy']): string[] | ((address: string, hop: number) => boolean) | false {
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return trust === false ? false : [...trust];
}

export interface AppDependencies {
  config: Config;
  /** Owned by the app from here on: closed when the app closes. */
  database: Database;
  logger: Logger;
}

/** Builds the whole service, exactly as production runs it; never listens. */
export async function buildApp({ config, database, logger }: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // One line per request, written by installRequestHooks, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    bodyLimit: ONE_MIB,
    trustProxy: trustedProxies(config.trustProxy),
    // Fastify's own 503 while closing lacks the SPEC §2 body: installDraining answers instead.
    return503OnClosing: false,
    // An undecodable path or an over-long id: rendered in the SPEC §2 shape too.
    frameworkErrors: renderFrameworkError,
    clientErrorHandler: answerClientError,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    schemaController: { compilersFactory: { buildSerializer: cachedSerializers } },
  });
  app.server.headersTimeout = HEADERS_TIMEOUT_MS;
  // Schemas routes name by `$ref`: components of the OpenAPI document.
  for (const schema of EVENT_FILTER_SCHEMAS) app.addSchema(schema);
  app.setValidatorCompiler(buildValidatorCompiler(EVENT_FILTER_SCHEMAS));
  installErrorHandling(app);
  installRequestHooks(app);
  installJsonParser(app);
  app.addHook('onClose', () => database.close());

  // The external API's lines (SPEC §10), made with its scope below; background work of a tenant takes its turn in them.
  let lines: TenantLines | undefined;
  const answering = new Answering();
  answering.install(app);
  const services = buildServices({
    database,
    config,
    logger: app.log,
    tenantTurn: turnsIn(() => lines, answering),
  });
  const { authenticator } = services;
  const cursors = new CursorCodec(() => appSecret(database.db, 'list-cursor-key'));
  const rateLimitStore = await openRateLimitStore(config.redisUrl, logger);
  if (rateLimitStore) app.addHook('onClose', async () => void rateLimitStore.disconnect());
  // Before every scope: their requests are then counted, and their preflights answered ahead of auth.
  await app.register(metrics, { database, token: config.metricsToken });
  await allowCrossOrigin(app, { origins: config.corsOrigins, pathPrefix: EXTERNAL_PREFIX });
  // Ahead of every route's own hooks: a request refused while shutting down or overloaded costs little.
  installDraining(app);
  limitRequestTime(app, config.requestTimeoutMs);
  boundDatabaseWaits(app, database, config.databaseConnectTimeoutMs);
  await shedLoad(app, config);

  await describeApi(app, EXTERNAL_DOCUMENT);
  await describeApi(app, ADMIN_DOCUMENT);
  await serveDocsPage(app);
  await serveConsole(app);
  app.get(`${EXTERNAL_PREFIX}/openapi.json`, { schema: { hide: true } }, () => app.swagger());
  app.get(`${ADMIN_PREFIX}/openapi.json`, { schema: { hide: true } }, () =>
    (app as unknown as { adminSwagger(): unknown }).adminSwagger(),
  );

  await app.register(healthRoutes, { database });

  await app.register(
    async (external) => {
      keepPresentedTokens(external);
      const rates = await limitRateByToken(external, {
        max: config.rateLimit,
        redis: rateLimitStore,
        nameSpace: 'funil:rate:external:',
        knowsValid: (hash) => authenticator.knowsValid(hash),
      });
      // Each route's first hooks, in this order: a request with a token not known valid is counted
      // against its address before the lookup; once authenticated it takes a place in its tenant's
      // line (or is refused, uncounted), and only then counts against its token.
      rates.countUnknownTokens(external);
      requireBearerToken(external, authenticator);
      const poolSize = database.stats().max;
      lines = new TenantLines({
        share: config.tenantConcurrency ?? defaultTenantShare(poolSize),
        capacity: config.requestConcurrency ?? defaultRequestConcurrency(database.backend, poolSize),
        maxWaiting: config.tenantQueue,
        boundMs: config.databaseConnectTimeoutMs,
        connectionWaitMs: (tenant) => database.expectedWaitMs(tenant),
      });
      shareByTenantLines(external, lines, { beforeRefusal: rates.showTokenCounters });
      rates.countTokens(external);
      rejectMalformedIds(external);
      honourIdempotencyKeys(external, services.idempotency);
      await external.register(leadRoutes, { leads: services.leads, pipelines: services.pipelineCatalog, cursors });
      await external.register(pipelineRoutes, { pipelines: services.pipelines });
      await external.register(mergeRoutes, {
        merges: services.merges,
        resources: [
          {
            family: 'lead',
            path: 'leads',
            noun: 'Lead',
            scopes: ['leads:read', 'leads:write'],
            object: services.leadSchemas.Lead,
            notFoundText: leadMessages.leadNotFound,
          },
          {
            family: 'customer',
            path: 'customers',
            noun: 'Customer',
            scopes: ['customers:read', 'customers:write'],
            object: Customer,
            notFoundText: customerMessages.customerNotFound,
          },
        ],
      });
      await external.register(customerRoutes, { customers: services.customers, cursors });
      await external.register(duplicateRoutes, {
        cursors,
        resources: [
          {
            table: 'leads',
            noun: 'Lead',
            readScope: 'leads:read',
            object: services.leadSchemas.Lead,
            notFoundText: leadMessages.leadNotFound,
            lookupMany: (handle, tenantId, ids) => services.leads.lookupMany(handle, tenantId, ids),
          },
          {
            table: 'customers',
            noun: 'Customer',
            readScope: 'customers:read',
            object: Customer,
            notFoundText: customerMessages.customerNotFound,
            lookupMany: (handle, tenantId, ids) => services.customers.lookupMany(handle, tenantId, ids),
          },
        ],
      });
      await external.register(customFieldRoutes, { fields: services.fields });
      await external.register(eventRoutes, {
        events: services.events,
        schemas: services.eventSchemas,
        filters: services.eventFilters,
      });
      await external.register(webhookRoutes, { webhooks: services.webhooks, secrets: services.secrets });
      await external.register(importRoutes, { imports: services.imports });
      await external.register(personalDataRoutes, {
        personalData: services.personalData,
        schemas: { Lead: services.leadSchemas.Lead, Customer, EventList: services.eventSchemas.EventList },
      });
      await external.register(exportRoutes, {
        db: services.db,
        resources: services.exportResources,
        requests: services.exportRequests,
        runs: services.exportRuns,
      });
      await external.register(tokenRoutes);
      await external.register(mcpRoutes, { services, cursors, origins: config.corsOrigins });
    },
    { prefix: EXTERNAL_PREFIX },
  );
  await app.register(workers, { services, config });

  await app.register(
    async (admin) => {
      await limitRateByAddress(admin, {
        max: config.adminRateLimit,
        redis: rateLimitStore,
        nameSpace: 'funil:rate:admin:',
      });
      requireAdminToken(admin, config.adminToken);
      rejectMalformedIds(admin);
      await admin.register(adminRoutes, { authenticator });
    },
    { prefix: ADMIN_PREFIX },
  );

  return app;
}

export { ADMIN_PREFIX, EXTERNAL_PREFIX };
