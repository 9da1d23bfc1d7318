import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import { adminRoutes } from './admin/admin.routes.js';
import { requireAdminToken } from './admin/admin-auth.js';
import { TokenAuthenticator } from './auth/token-authenticator.js';
import type { Config } from './config.js';
import { customerRoutes } from './customers/customer.routes.js';
import { appSecret } from './db/app-secrets.js';
import type { Database } from './db/database.js';
import { requireBearerToken } from './http/authenticate.js';
import { CursorCodec } from './http/cursor.js';
import { installErrorHandling } from './http/error-handler.js';
import { healthRoutes } from './http/health.routes.js';
import { rejectMalformedIds } from './http/id-param.js';
import { limitRate, openRateLimitStore } from './http/rate-limit.js';
import { installJsonParser, installRequestHooks } from './http/request-hooks.js';
import { requestIdOf } from './http/request-id.js';
import { buildValidatorCompiler } from './http/validation.js';
import { honourIdempotencyKeys } from './idempotency/idempotency.plugin.js';
import { leadRoutes } from './leads/lead.routes.js';

export const EXTERNAL_PREFIX = '/api/external/v1';
export const ADMIN_PREFIX = '/api/admin/v1';
const ONE_MIB = 1024 * 1024;

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
    trustProxy: config.trustProxy,
  });
  app.setValidatorCompiler(buildValidatorCompiler());
  installErrorHandling(app);
  installRequestHooks(app);
  installJsonParser(app);
  app.addHook('onClose', () => database.close());

  const authenticator = new TokenAuthenticator(database.db);
  const cursors = new CursorCodec(() => appSecret(database.db, 'list-cursor-key'));
  const rateLimitStore = await openRateLimitStore(config.redisUrl, logger);
  if (rateLimitStore) app.addHook('onClose', async () => void rateLimitStore.disconnect());

  await app.register(healthRoutes, { database });

  await app.register(
    async (external) => {
      await limitRate(external, { max: config.rateLimit, redis: rateLimitStore, nameSpace: 'funil:rate:external:' });
      requireBearerToken(external, authenticator);
      rejectMalformedIds(external);
      honourIdempotencyKeys(external, database.db);
      await external.register(leadRoutes, { db: database.db, config, cursors });
      await external.register(customerRoutes, { db: database.db, cursors });
    },
    { prefix: EXTERNAL_PREFIX },
  );

  await app.register(
    async (admin) => {
      await limitRate(admin, {
        max: config.adminRateLimit,
        redis: rateLimitStore,
        nameSpace: 'funil:rate:admin:',
        perAddress: true,
      });
      requireAdminToken(admin, config.adminToken);
      rejectMalformedIds(admin);
      await admin.register(adminRoutes, { db: database.db, authenticator });
    },
    { prefix: ADMIN_PREFIX },
  );

  return app;
}
