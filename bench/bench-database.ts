import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { CamelCasePlugin, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { issueToken } from '../src/admin/issue-token.js';
import { TenantRepository } from '../src/admin/tenant.repository.js';
import { buildApp } from '../src/app.js';
import { SCOPES } from '../src/auth/scopes.js';
import { TokenRepository } from '../src/auth/token.repository.js';
import { prepareDatabase } from '../src/bootstrap.js';
import { loadConfig } from '../src/config.js';
import { type Database, type Db, openDatabase } from '../src/db/database.js';
import type { Tables } from '../src/db/tables.js';
import { withAdminClient, withDatabase } from '../test/helpers/postgres-admin.js';

export const silent = pino({ level: 'silent' });

/**
 * Funil's settings a benchmark changes to measure capacity: no demo tenant, no per-token limit (the
 * only limit raised: fair share keeps its defaults, and every answer that is not a 2xx counts as an
 * error), no shedding when the event loop lags (a benchmark saturates it on purpose).
 */
export const CAPACITY_SETTINGS: Readonly<Record<string, string>> = {
  FUNIL_BOOTSTRAP: 'false',
  FUNIL_RATE_LIMIT: '10000000',
  FUNIL_MAX_EVENT_LOOP_DELAY_MS: '0',
};

/**
 * The production app on a bench database, as a benchmark drives it through `inject`, with
 * CAPACITY_SETTINGS (fair share at its defaults) and no webhook delivery unless `env` turns it on.
 * The app owns the database from here on: closing it closes the pool.
 */
export async function benchApp(database: Database, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const app = await buildApp({
    config: loadConfig({
      NODE_ENV: 'production',
      LOG_LEVEL: 'silent',
      ...CAPACITY_SETTINGS,
      FUNIL_WEBHOOKS_DELIVER: 'false',
      ...env,
    }),
    database,
    logger: silent,
  });
  await app.ready();
  return app;
}

export interface ScratchDatabase {
  database: Database;
  /** For seeding: the same database without the service's statement timeout. */
  bulk: Db;
  /** The database's name on the server, or its directory for PGlite. */
  name: string;
  /** Closes the database and throws it away. */
  drop(): Promise<void>;
}

/** The PostgreSQL server to benchmark on, if any. */
export function benchPostgresUrl(): string | undefined {
  return process.env.FUNIL_BENCH_DATABASE_URL || process.env.FUNIL_TEST_DATABASE_URL || undefined;
}

/** A new, migrated database on the server at `url`, dropped afterwards. */
export async function scratchPostgres(url: string, label: string): Promise<ScratchDatabase> {
  const name = `funil_${label}_${randomBytes(4).toString('hex')}`;
  await withAdminClient(url, (client) => client.query(`create database ${name}`));
  const target = withDatabase(url, name);
  const database = await openDatabase({ databaseUrl: target, dataDir: '', poolSize: 5, logger: silent });
  await prepareDatabase(database.db, { bootstrap: false });
  const bulkPool = new pg.Pool({ connectionString: target, max: 2, statement_timeout: 0 });
  // pg-pool's end() resolves once it has asked its connections to close, not once they are: the drop
  // below can end one first, and an 'error' on a pool with no listener would end the process.
  bulkPool.on('error', () => {});
  const bulk = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool: bulkPool }),
    plugins: [new CamelCasePlugin()],
  });
  return {
    database,
    bulk,
    name,
    async drop() {
      await bulk.destroy();
      await database.close();
      await withAdminClient(url, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/** A new, migrated PGlite database in a temporary directory, deleted afterwards. */
export async function scratchPglite(): Promise<ScratchDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), 'funil-bench-'));
  const database = await openDatabase({ dataDir, poolSize: 1, logger: silent });
  await prepareDatabase(database.db, { bootstrap: false });
  return {
    database,
    bulk: database.db,
    name: dataDir,
    async drop() {
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface BenchTenant {
  id: string;
  tokenId: string;
  /** A bearer token with every scope. */
  token: string;
}

export async function createTenant(database: Database, name: string): Promise<BenchTenant> {
  const tenant = await new TenantRepository(database.db).create(name);
  const issued = await issueToken(new TokenRepository(database.db), {
    tenantId: tenant.id,
    name: 'bench',
    scopes: SCOPES,
    expiresAt: null,
  });
  return { id: tenant.id, tokenId: issued.id, token: issued.token };
}

/**
 * Inserts `count` leads for a tenant in one set-based statement (generate_series), numbered from
 * `from`: one created every 10 seconds from 2024 on, with time-ordered (UUIDv7-shaped) ids as the
 * service makes them, repeated names, a tenth without e-mail, a quarter never contacted.
 */
export async function seedLeads(db: Db, tenant: BenchTenant, count: number, from = 1): Promise<void> {
  await sql`
    insert into leads (id, tenant_id, name, email, phone, source, status, score, last_contact, created_by, created_at, updated_at)
    select
      (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12))::uuid,
      ${tenant.id},
      (array['Ana', 'Bruno', 'Carla', 'Diego', 'Elisa', 'Fábio', 'Gabriela', 'Heitor', 'Isabela', 'João'])[1 + g % 10]
        || ' ' || (array['Silva', 'Souza', 'Costa', 'Oliveira', 'Pereira', 'Lima', 'Santos'])[1 + (g / 10) % 7]
        || ' ' || (g % 1000),
      case when g % 10 = 0 then null else 'lead' || g || '@example.com' end,
      case when g % 10 = 0 or g % 3 = 0 then '+55 11 9' || lpad((g % 100000)::text, 5, '0') || '-' || lpad((g % 9973)::text, 4, '0') end,
      (array['form', 'ads', 'partner', 'referral', 'event', null])[1 + g % 6],
      (array['new', 'contacted', 'qualified', 'proposal', 'negotiation', 'won', 'lost'])[1 + g % 7],
      (g::bigint * 37) % 101,
      case when g % 4 <> 0 then timestamptz '2025-06-01' + (g % 5000) * interval '1 hour' end,
      ${tenant.tokenId},
      created,
      created + ((g::bigint * 7919) % 8640000) * interval '10 milliseconds'
    from (
      select g, created,
        lpad(to_hex(floor(extract(epoch from created) * 1000)::bigint), 12, '0') as h,
        md5(g::text || ${tenant.id}) as r
      from (
        select g, timestamptz '2024-01-01' + g * interval '10 seconds' as created
        from generate_series(${from}::int, ${from + count - 1}::int) as g
      ) as numbered
    ) as s`.execute(db);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
