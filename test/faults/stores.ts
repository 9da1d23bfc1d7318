import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import pino from 'pino';
import { openDatabase } from '../../src/db/database.js';
import { migratedDataDir, postgresTestUrl, withDatabase } from '../helpers/test-database.js';

/** Where a server process under test keeps its data, and a way to look at it once the process is gone. */
export interface Store {
  readonly backend: 'pglite' | 'postgres';
  /** The environment that points a server at it. */
  readonly env: Record<string, string>;
  /** Every lead stored, read directly from the database (no server involved). */
  leads(): Promise<Array<{ id: string; name: string }>>;
  destroy(): Promise<void>;
}

export async function createStore(backend: Store['backend']): Promise<Store> {
  return backend === 'pglite' ? pgliteStore() : postgresStore();
}

async function pgliteStore(): Promise<Store> {
  // A migrated copy: a first PGlite start makes its cluster and migrates, which takes many seconds.
  const dataDir = await migratedDataDir('funil-fault-');
  return {
    backend: 'pglite',
    env: { FUNIL_DATA_DIR: dataDir },
    async leads() {
      const database = await openDatabase({ dataDir, poolSize: 1, logger: pino({ level: 'silent' }) });
      try {
        return await database.db.selectFrom('leads').select(['id', 'name']).execute();
      } finally {
        await database.close();
      }
    },
    destroy: () => rm(dataDir, { recursive: true, force: true }),
  };
}

async function postgresStore(): Promise<Store> {
  const url = postgresTestUrl() as string;
  const name = `funil_fault_${randomBytes(5).toString('hex')}`;
  await adminQuery(url, `create database ${name}`);
  const databaseUrl = withDatabase(url, name);
  return {
    backend: 'postgres',
    env: { DATABASE_URL: databaseUrl },
    async leads() {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        return (await client.query<{ id: string; name: string }>('select id, name from leads')).rows;
      } finally {
        await client.end();
      }
    },
    destroy: () => adminQuery(url, `drop database if exists ${name} with (force)`),
  };
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
