import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';

/**
 * The app as far as its OpenAPI documents need it: they are built from route schemas only, so a
 * pool that never connects will do. `env` adds settings (the admin document needs an admin token).
 */
export async function documentApp(env: Record<string, string> = {}): Promise<FastifyInstance> {
  const logger = pino({ level: 'silent' });
  const database = await openDatabase({
    databaseUrl: 'postgres://openapi@127.0.0.1:9/none',
    dataDir: '',
    poolSize: 1,
    logger,
  });
  // However busy the machine, the documents are served: nothing is shed.
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    FUNIL_MAX_EVENT_LOOP_DELAY_MS: '0',
    FUNIL_MAX_HEAP_USED_MB: '0',
    ...env,
  });
  return buildApp({ config, database, logger });
}
