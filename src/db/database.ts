import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { CamelCasePlugin, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import type { Tables } from './tables.js';

export type Db = Kysely<Tables>;

const PGLITE_VACUUM_INTERVAL_MS = 10 * 60_000;

export interface Database {
  readonly db: Db;
  readonly backend: 'pglite' | 'postgres';
  /** Resolves when the database answers a trivial query within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize: number;
  logger: Logger;
}

/** Opens PostgreSQL when a URL is given, else the embedded PGlite in `dataDir`; one Kysely dialect for both. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize, options.logger)
    : openPglite(options.dataDir, options.logger);
}

function openPostgres(connectionString: string, poolSize: number, logger: Logger): Database {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 15_000,
    application_name: 'funil',
  });
  // An idle client that loses its connection emits 'error' on the pool; unhandled, it would kill the process.
  pool.on('error', (error) => logger.warn({ err: error }, 'idle database connection lost'));
  pool.on('connect', (client) => {
    client.on('error', (error) => logger.warn({ err: error }, 'database connection lost'));
  });
  return fromPool(pool, 'postgres', async () => {});
}

async function openPglite(dataDir: string, logger: Logger): Promise<Database> {
  const lock = await acquireDataDirLock(dataDir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dataDir, { extensions: { pg_trgm } });
  } catch (error) {
    await lock.release();
    throw error;
  }
  // PGlite is one single-threaded backend: one connection is all there is.
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 });
  pool.on('error', (error) => logger.warn({ err: error }, 'embedded database connection error'));
  let vacuum: NodeJS.Timeout | undefined;
  const database = fromPool(pool, 'pglite', () => closePglite(pglite, lock, vacuum));
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

function fromPool(pool: pg.Pool, backend: Database['backend'], close: () => Promise<void>): Database {
  const db = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool }),
    plugins: [new CamelCasePlugin()],
  });
  let closing: Promise<void> | undefined;
  return {
    db,
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
    close() {
      // Kysely's destroy ends the pool; what the backend holds besides is closed after it.
      closing ??= db.destroy().finally(close);
      return closing;
    },
  };
}
