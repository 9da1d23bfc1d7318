import type { PGlite } from '@electric-sql/pglite';
import {
  type ConnectionProvider,
  DefaultConnectionProvider,
  DefaultQueryExecutor,
  type Dialect,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
} from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { ColumnNames } from './column-names.js';
import { ConnectionQueue } from './connection-queue.js';
import { connectWithinBudget, type WaitBudget } from './connection-wait.js';
import { preparePrivateDir } from './data-dir.js';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import { prepareNamedStatements } from './named-statements.js';
import { DEFAULT_EMBEDDED_SHARED_BUFFERS_MB, pgliteStartParams } from './pglite-settings.js';
import { pgliteConnection } from './pglite-socket.js';
import { BudgetedConnections, PoolDriver } from './pool-driver.js';
import type { Tables } from './tables.js';
import { DEFAULT_DB_CONNECT_TIMEOUT_MS, DEFAULT_DB_STATEMENT_TIMEOUT_MS } from './timeouts.js';

export type Db = Kysely<Tables>;

const PGLITE_VACUUM_INTERVAL_MS = 10 * 60_000;

export interface Database {
  /** For work of no request: each connection it takes waits at most the connect timeout, in the line of no tenant. */
  readonly db: Db;
  /**
   * A request's handle: its connections wait in `budget`'s line, within what the budget has left
   * (SPEC §10, bounded waiting). Cheap: a request makes one.
   */
  within(budget: WaitBudget): Db;
  readonly backend: 'pglite' | 'postgres';
  /** Resolves when the database answers a trivial query within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<boolean>;
  /** The connection pool right now, for metrics (PGlite: a pool of one). */
  stats(): PoolStats;
  /** How long a query of `party` (a tenant) asking for a connection now would wait, from the recent holds (connection-queue.ts). */
  expectedWaitMs(party: string): number;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Connections the pool may open. */
  readonly max: number;
  /** Connections open, busy or idle. */
  readonly total: number;
  readonly idle: number;
  /** Queries waiting for a connection. */
  readonly waiting: number;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize: number;
  logger: Logger;
  /** How long a query may wait for a connection: a free pool slot, or a new connection. */
  connectTimeoutMs?: number;
  /** PostgreSQL's `statement_timeout` (not applied to PGlite, which has no timers). */
  statementTimeoutMs?: number;
  /** Hot statements as named prepared statements (named-statements.ts); off behind a pooler that cannot keep them. */
  preparedStatements?: boolean;
  /** The embedded database's buffer cache (pglite-settings.ts); not used on PostgreSQL. */
  embeddedSharedBuffersMb?: number;
}

/** Opens PostgreSQL when a URL is given, else the embedded PGlite in `dataDir`; one Kysely dialect for both. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_DB_CONNECT_TIMEOUT_MS;
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, {
        poolSize: options.poolSize,
        connectTimeoutMs,
        statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_DB_STATEMENT_TIMEOUT_MS,
        preparedStatements: options.preparedStatements ?? true,
        logger: options.logger,
      })
    : openPglite(options.dataDir, {
        connectTimeoutMs,
        sharedBuffersMb: options.embeddedSharedBuffersMb ?? DEFAULT_EMBEDDED_SHARED_BUFFERS_MB,
        logger: options.logger,
      });
}

interface PostgresOptions {
  poolSize: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  preparedStatements: boolean;
  logger: Logger;
}

/** Idle connections are closed after this; the pool opens new ones on demand (and after an outage). */
const IDLE_TIMEOUT_MS = 30_000;
/** A session left idle inside a transaction (a stalled process) is ended by PostgreSQL and frees its locks. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;
/** TCP keep-alive probes find connections that died without a word (a network partition, a lost host). */
const TCP_KEEPALIVE_DELAY_MS = 10_000;
const POOL_END_TIMEOUT_MS = 2_000;

function openPostgres(connectionString: string, options: PostgresOptions): Database {
  const { logger } = options;
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize,
    // Covers both the wait for a free slot and the connection itself: during an outage or a
    // saturated pool, a request fails fast with 503 instead of queueing without bound.
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    statement_timeout: options.statementTimeoutMs,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: TCP_KEEPALIVE_DELAY_MS,
    application_name: 'funil',
  });
  // An idle client that loses its connection emits 'error' on the pool; unhandled, it would kill the process.
  pool.on('error', (error) => logger.warn({ err: error }, 'idle database connection lost'));
  // A client checked out of the pool has no 'error' listener of pg-pool's: when PostgreSQL goes away
  // mid-query the client emits 'error', and without this listener the process would crash.
  pool.on('connect', (client) => {
    client.on('error', (error) => logger.warn({ err: error }, 'database connection lost'));
    if (options.preparedStatements) prepareNamedStatements(client);
    // Timestamps read as text then arrive in UTC, the form the API writes without a Date
    // (timestamp-text.ts; any other zone is still read right, only slower). A SET, not the
    // `options` startup parameter, which would replace PGOPTIONS and which some poolers refuse.
    // Queued on the client before the pool hands it out, so it runs before the first query.
    client.query("set time zone 'UTC'").catch((error) => logger.warn({ err: error }, 'could not set the time zone'));
  });
  const database = fromPool(pool, 'postgres', async () => {}, options.connectTimeoutMs, false);
  return {
    ...database,
    // Ending the pool waits for every connection in use: one stuck on a server that stopped
    // answering would hold the shutdown past SPEC §12's 10 s. The process is exiting anyway.
    close: () =>
      new Promise<void>((resolve, reject) => {
        const giveUp = setTimeout(() => {
          logger.warn('database connections still busy at shutdown: leaving them');
          resolve();
        }, POOL_END_TIMEOUT_MS);
        database
          .close()
          .then(resolve, reject)
          .finally(() => clearTimeout(giveUp));
      }),
  };
}

interface PgliteOptions {
  connectTimeoutMs: number;
  sharedBuffersMb: number;
  logger: Logger;
}

async function openPglite(
  dataDir: string,
  { connectTimeoutMs, sharedBuffersMb, logger }: PgliteOptions,
): Promise<Database> {
  // Loaded only in embedded mode: a server on PostgreSQL never needs it.
  const [{ PGlite }, { pg_trgm }, { btree_gin }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
    import('@electric-sql/pglite/contrib/btree_gin'),
  ]);
  await preparePrivateDir(dataDir, logger);
  const lock = await acquireDataDirLock(dataDir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dataDir, {
      extensions: { pg_trgm, btree_gin },
      startParams: pgliteStartParams(PGlite.defaultStartParams, sharedBuffersMb),
    });
  } catch (error) {
    await lock.release();
    throw error;
  }
  // PGlite is one single-threaded backend: one connection is all there is.
  // Requests queue for it; one that waits too long gets a 503 rather than running after its answer.
  const pool = new pg.Pool({ ...pgliteConnection(pglite), max: 1, connectionTimeoutMillis: connectTimeoutMs });
  pool.on('error', (error) => logger.warn({ err: error }, 'embedded database connection error'));
  pool.on('connect', prepareNamedStatements);
  let vacuum: NodeJS.Timeout | undefined;
  const database = fromPool(pool, 'pglite', () => closePglite(pglite, lock, vacuum), connectTimeoutMs, true);
  // PGlite runs no autovacuum: without this, dead rows pile up and plans go stale.
  vacuum = setInterval(() => {
    sql`vacuum analyze`.execute(database.db).catch((error) => logger.warn({ err: error }, 'vacuum failed'));
  }, PGLITE_VACUUM_INTERVAL_MS);
  vacuum.unref();
  return database;
}

async function closePglite(pglite: PGlite, lock: DataDirLock, vacuum: NodeJS.Timeout | undefined): Promise<void> {
  clearInterval(vacuum);
  try {
    await pglite.close();
  } finally {
    await lock.release();
  }
}

/**
 * How a connection is taken from the pool: in the turn of the budget's line and within what it has
 * left to wait (connection-wait.ts). On PGlite, also a yield after each checkout: PGlite runs each
 * query synchronously on this thread, and the queue hands its one connection to the next waiting
 * query within the same tick, so a backlog of queries would run back to back without the event
 * loop ever turning (no `/health`, no timers, no timeouts, no signals) for seconds. One yield lets
 * it turn.
 */
function checkoutFrom(pool: pg.Pool, queue: ConnectionQueue, yieldAfterCheckout: boolean) {
  return (budget: WaitBudget): Promise<pg.PoolClient> => {
    const connected = connectWithinBudget(queue, pool, budget);
    if (!yieldAfterCheckout) return connected;
    return connected.then((client) => new Promise<pg.PoolClient>((resolve) => setImmediate(resolve, client)));
  };
}

function fromPool(
  pool: pg.Pool,
  backend: Database['backend'],
  close: () => Promise<void>,
  connectTimeoutMs: number,
  yieldAfterCheckout: boolean,
): Database {
  const queue = new ConnectionQueue(pool.options.max, connectTimeoutMs);
  const driver = new PoolDriver(checkoutFrom(pool, queue, yieldAfterCheckout), () => pool.end(), connectTimeoutMs);
  const adapter = new PostgresAdapter();
  const compiler = new PostgresQueryCompiler();
  const dialect: Dialect = {
    createDriver: () => driver,
    createAdapter: () => adapter,
    createQueryCompiler: () => compiler,
    createIntrospector: (on) => new PostgresIntrospector(on),
  };
  const plugins = [new ColumnNames()];
  const config = { dialect, plugins };
  // Built from its parts, as Kysely builds itself from a dialect, so that a request's handle shares
  // them all but where its connections come from.
  const handle = (connections: ConnectionProvider) =>
    new Kysely<Tables>({
      config,
      dialect,
      driver,
      executor: new DefaultQueryExecutor(compiler, adapter, connections, plugins),
    });
  const db = handle(new DefaultConnectionProvider(driver));
  let closing: Promise<void> | undefined;
  return {
    db,
    within: (budget) => handle(new BudgetedConnections(driver, budget)),
    backend,
    async ping(timeoutMs = 2_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const query = sql`select 1`.execute(db).then(
        () => true,
        () => false,
      );
      try {
        return await Promise.race([query, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    expectedWaitMs: (party) => queue.expectedWaitMs(party),
    stats() {
      return {
        max: pool.options.max,
        total: pool.totalCount,
        idle: pool.idleCount,
        waiting: queue.waiting + pool.waitingCount,
      };
    },
    close() {
      // Kysely's destroy ends the pool; what the backend holds besides is closed after it.
      closing ??= db.destroy().finally(close);
      return closing;
    },
  };
}
