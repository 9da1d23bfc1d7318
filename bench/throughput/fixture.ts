/**
 * The data every target is measured on: one tenant with 10,000 leads and 1,000 customers, seeded
 * once into a template (a PostgreSQL template database, a PGlite data directory) with the same ids
 * in both, and copied afresh for every run of every target, so that the writes of one run never
 * reach the next.
 */

import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { DEFAULT_LEAD_STATUSES } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { withAdminClient } from '../../test/helpers/postgres-admin.js';
import {
  type BenchTenant,
  createTenant,
  type ScratchDatabase,
  scratchPglite,
  scratchPostgres,
  seedLeads,
} from '../bench-database.js';
import {
  bind,
  LIST_LIMIT,
  type Query,
  renderCustomer,
  renderLead,
  renderLeadListItem,
  SQL,
} from '../reference/queries.js';
import { leadFormBody, type WorkloadData } from './workloads.js';

export const LEADS = 10_000;
export const CUSTOMERS = 1_000;

/** What the HTTP ceiling answers, byte for byte the size of what the real servers send. */
export interface CeilingBodies {
  leadList: string;
  lead: string;
  createdLead: string;
  customer: string;
}

export interface DatabaseCopy {
  /** A connection string (PostgreSQL) or a data directory (PGlite). */
  location: string;
  /** The database's name on the server (PostgreSQL only). */
  name?: string;
  discard(): Promise<void>;
}

export interface Fixture {
  tenant: BenchTenant;
  data: WorkloadData;
  bodies: CeilingBodies;
  /** The PostgreSQL server, when there is one to benchmark on. */
  postgresUrl: string | undefined;
  postgresVersion: string | undefined;
  copyPostgres(): Promise<DatabaseCopy>;
  copyPglite(): Promise<DatabaseCopy>;
  close(): Promise<void>;
}

export async function prepareFixture(postgresUrl: string | undefined): Promise<Fixture> {
  const discards: (() => Promise<void>)[] = [];
  try {
    let tenant: BenchTenant | undefined;
    let postgresTemplate: string | undefined;
    let postgresVersion: string | undefined;
    let rendered: { bodies: CeilingBodies; data: WorkloadData } | undefined;

    if (postgresUrl) {
      const scratch = await scratchPostgres(postgresUrl, 'benchtpl');
      discards.push(() => dropDatabase(postgresUrl, scratch.name));
      tenant = await createTenant(scratch.database, 'Bench');
      await seed(scratch.bulk, tenant);
      await pgbenchIdTables(scratch.bulk);
      rendered = await render(scratch.bulk, tenant);
      const version = await sql<{ version: string }>`select current_setting('server_version') as version`.execute(
        scratch.bulk,
      );
      postgresVersion = version.rows[0]?.version;
      await closeWithoutDropping(scratch);
      postgresTemplate = scratch.name;
    }

    const lite = await scratchPglite();
    discards.push(() => rm(lite.name, { recursive: true, force: true }));
    if (tenant) await copyTenant(lite.bulk, tenant, postgresUrl as string, postgresTemplate as string);
    else tenant = await createTenant(lite.database, 'Bench');
    await seed(lite.bulk, tenant);
    rendered ??= await render(lite.bulk, tenant);
    await lite.database.close();
    const pgliteTemplate = lite.name;

    const { bodies, data } = rendered;
    const fixedTenant = tenant;
    return {
      tenant: fixedTenant,
      data,
      bodies,
      postgresUrl,
      postgresVersion,
      async copyPostgres() {
        if (!postgresUrl || !postgresTemplate) throw new Error('no PostgreSQL server to copy to');
        const name = `funil_benchrun_${randomBytes(4).toString('hex')}`;
        await withAdminClient(postgresUrl, (client) =>
          client.query(`create database ${name} template ${postgresTemplate}`),
        );
        const url = new URL(postgresUrl);
        url.pathname = `/${name}`;
        return { location: url.toString(), name, discard: () => dropDatabase(postgresUrl, name) };
      },
      async copyPglite() {
        const dir = await mkdtemp(join(tmpdir(), 'funil-benchrun-'));
        await cp(pgliteTemplate, dir, { recursive: true });
        return { location: dir, discard: () => rm(dir, { recursive: true, force: true }) };
      },
      async close() {
        await discardAll(discards);
      },
    };
  } catch (error) {
    await discardAll(discards);
    throw error;
  }
}

async function discardAll(discards: (() => Promise<void>)[]): Promise<void> {
  for (const discard of discards.reverse()) await discard().catch(() => undefined);
}

async function seed(db: Db, tenant: BenchTenant): Promise<void> {
  await seedLeads(db, tenant, LEADS);
  await seedCustomers(db, tenant, CUSTOMERS);
  await sql`vacuum analyze`.execute(db);
}

/** Customers in one set-based statement: time-ordered ids as the service makes them, a unique e-mail each. */
async function seedCustomers(db: Db, tenant: BenchTenant, count: number): Promise<void> {
  await sql`
    insert into customers (id, tenant_id, first_name, last_name, name, email, phone, status, type, value, auto_payment, notes, created_at, updated_at)
    select
      (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12))::uuid,
      ${tenant.id}, first, last, first || ' ' || last,
      'cliente' || g || '@example.com',
      '+55 21 9' || lpad((g * 7919 % 10000)::text, 4, '0') || '-' || lpad((g % 10000)::text, 4, '0'),
      (array['active', 'active', 'active', 'inactive', 'blocked'])[1 + g % 5],
      case when g % 4 = 0 then 'company' else 'individual' end,
      (g::bigint * 7919 % 1000000) / 100.0,
      g % 3 = 0,
      case when g % 5 = 0 then 'Cliente desde 2023; prefere boleto e contato por e-mail.' end,
      created, created + (g % 500) * interval '1 hour'
    from (
      select g, created,
        (array['Ana', 'Bruno', 'Carla', 'Diego', 'Elisa', 'Fábio', 'Gabriela', 'Heitor'])[1 + g % 8] as first,
        (array['Silva', 'Souza', 'Costa', 'Oliveira', 'Pereira', 'Lima'])[1 + (g / 8) % 6] || ' ' || (g % 100) as last,
        lpad(to_hex(floor(extract(epoch from created) * 1000)::bigint), 12, '0') as h,
        md5('customer' || g::text || ${tenant.id}) as r
      from (
        select g, timestamptz '2023-01-01' + g * interval '1 hour' as created from generate_series(1, ${count}::int) as g
      ) as numbered
    ) as s`.execute(db);
}

/** pgbench cannot draw a random uuid from a table: these number the rows so that it can draw an integer. */
async function pgbenchIdTables(db: Db): Promise<void> {
  await sql`create table bench_lead_ids as select (row_number() over (order by id))::int as n, id from leads`.execute(
    db,
  );
  await sql`alter table bench_lead_ids add primary key (n)`.execute(db);
  await sql`create table bench_customer_ids as select (row_number() over (order by id))::int as n, id from customers`.execute(
    db,
  );
  await sql`alter table bench_customer_ids add primary key (n)`.execute(db);
  await sql`vacuum analyze bench_lead_ids, bench_customer_ids`.execute(db);
}

/** The same tenant and token rows in a second database, so that one token and one set of ids serve every target. */
async function copyTenant(to: Db, tenant: BenchTenant, serverUrl: string, templateName: string): Promise<void> {
  const url = new URL(serverUrl);
  url.pathname = `/${templateName}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const tenantRow = (await client.query('select id, name from tenants where id = $1', [tenant.id])).rows[0];
    const token = (
      await client.query('select id, tenant_id, name, token_hash, prefix, scopes from api_tokens where id = $1', [
        tenant.tokenId,
      ])
    ).rows[0];
    await sql`insert into tenants (id, name) values (${tenantRow.id}, ${tenantRow.name})`.execute(to);
    await sql`
      insert into api_tokens (id, tenant_id, name, token_hash, prefix, scopes)
      values (${token.id}, ${token.tenant_id}, ${token.name}, ${token.token_hash}, ${token.prefix}, ${token.scopes})`.execute(
      to,
    );
  } finally {
    await client.end();
  }
}

/** The ids the workloads draw from, and the ceiling's bodies, rendered as the reference renders them. */
async function render(db: Db, tenant: BenchTenant): Promise<{ bodies: CeilingBodies; data: WorkloadData }> {
  const raw = db.withoutPlugins();
  const query: Query = async (text, params) => (await raw.executeQuery(CompiledQuery.raw(text, params))).rows as never;
  const leadIds = (await query('select id from leads where tenant_id = $1 order by id', [tenant.id])).map(
    (row) => row.id as string,
  );
  const customerIds = (await query('select id from customers where tenant_id = $1 order by id', [tenant.id])).map(
    (row) => row.id as string,
  );
  const list = await query(SQL.listLeads.text, bind(SQL.listLeads, { tenantId: tenant.id }));
  const [lead] = await query(SQL.findLead.text, bind(SQL.findLead, { tenantId: tenant.id, id: leadIds[0] }));
  const [customer] = await query(
    SQL.findCustomer.text,
    bind(SQL.findCustomer, { tenantId: tenant.id, id: customerIds[0] }),
  );
  if (!lead || !customer) throw new Error('the seeded rows are missing');
  const form = leadFormBody(123_456);
  const now = new Date();
  const created = { ...lead, ...form, status: 'new', last_contact: null, created_at: now, updated_at: now };
  return {
    data: { leadIds, customerIds, statuses: [...DEFAULT_LEAD_STATUSES] },
    bodies: {
      leadList: JSON.stringify(list.slice(0, LIST_LIMIT).map(renderLeadListItem)),
      lead: JSON.stringify(renderLead(lead)),
      createdLead: JSON.stringify(renderLead(created)),
      customer: JSON.stringify(renderCustomer(customer)),
    },
  };
}

async function closeWithoutDropping(scratch: ScratchDatabase): Promise<void> {
  await scratch.bulk.destroy();
  await scratch.database.close();
}

async function dropDatabase(url: string, name: string): Promise<void> {
  await withAdminClient(url, (client) => client.query(`drop database if exists ${name} with (force)`));
}
