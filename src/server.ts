import type { FastifyInstance } from 'fastify';
import { buildApp, EXTERNAL_PREFIX } from './app.js';
import { type PreparedDatabase, prepareDatabase } from './bootstrap.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { DataDirLockedError } from './db/data-dir-lock.js';
import { openDatabase } from './db/database.js';
import { createLogger } from './logger.js';

type DemoToken = NonNullable<PreparedDatabase['demoToken']>;

const SHUTDOWN_DEADLINE_MS = 10_000;
/**
 * Requests in flight end within FUNIL_REQUEST_TIMEOUT_MS; a connection still open this long after
 * the signal (a client trickling its headers or body) is cut, so that the database can still be
 * closed and the process exit 0 within SPEC §12's 10 s.
 */
const FORCE_CLOSE_CONNECTIONS_MS = 7_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config);
  // A library that drops a promise (pg-boss completes a batch of jobs without awaiting it) must not
  // end the process when the database is away for a moment: the job expires and runs again.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    preparedStatements: config.databasePreparedStatements,
    embeddedSharedBuffersMb: config.embeddedSharedBuffersMb,
    logger,
  });
  let app: FastifyInstance;
  try {
    const prepared = await prepareDatabase(database.db, {
      bootstrap: config.bootstrap,
      leadStatuses: config.leadStatuses,
    });
    if (prepared.migrations.length) logger.info({ migrations: prepared.migrations }, 'database migrated');
    app = await buildApp({ config, database, logger });
    await app.listen({ host: config.host, port: config.port });
    if (prepared.demoToken) printDemoToken(config, app, prepared.demoToken);
  } catch (error) {
    await database.close();
    throw error;
  }
  logger.info(
    { backend: database.backend, dataDir: database.backend === 'pglite' ? config.dataDir : undefined },
    'Funil is ready',
  );
  handleSignals(app);
}

function printDemoToken(config: Config, app: FastifyInstance, { token, expiresAt }: DemoToken): void {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const origin = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const base = `${origin}${EXTERNAL_PREFIX}`;
  process.stdout.write(
    [
      '',
      'First start: created tenant "Demo" and a token with every scope. It is shown only this once:',
      '',
      `  ${token}`,
      '',
      `It expires at ${expiresAt.toISOString()} (in 30 days); \`funil tokens create\` issues others.`,
      '',
      'Try it:',
      `  curl -H "Authorization: Bearer ${token}" ${base}/leads`,
      `  or open ${origin}/console and paste the token (the API's reference: ${origin}/docs)`,
      '',
    ].join('\n'),
  );
}

function handleSignals(app: FastifyInstance): void {
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    closing = true;
    const started = performance.now();
    app.log.info({ signal }, 'shutting down');
    setTimeout(() => {
      app.log.warn('closing the connections still open');
      app.server.closeAllConnections();
    }, FORCE_CLOSE_CONNECTIONS_MS).unref();
    setTimeout(() => {
      app.log.error('shutdown took too long: exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    app.close().then(
      () => {
        app.log.info({ durationMs: Math.round(performance.now() - started) }, 'shut down');
        process.exit(0);
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof DataDirLockedError) {
    process.stderr.write(`funil: ${error.message}\n`);
  } else {
    process.stderr.write(`funil: could not start: ${error instanceof Error ? error.stack : String(error)}\n`);
  }
  process.exit(1);
});
