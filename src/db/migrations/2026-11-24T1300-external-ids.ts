import { type Kysely, sql } from 'kysely';

/**
 * SPEC §13: the calling system's own id on leads and customers, unique per tenant and resource
 * when set (the partial unique index is also what serves the `externalId=` filter), and the
 * customer a lead was converted to. `customer_id` has no foreign key on purpose: deleting a
 * customer must not change a lead behind the write path's back (SPEC §14: no change without its
 * event); a conversion that finds its customer gone converts again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table leads add column external_id text, add column customer_id uuid`.execute(db);
  await sql`alter table customers add column external_id text`.execute(db);
  await sql`create unique index leads_tenant_external_id_key on leads (tenant_id, external_id)
    where external_id is not null`.execute(db);
  await sql`create unique index customers_tenant_external_id_key on customers (tenant_id, external_id)
    where external_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table leads drop column if exists external_id, drop column if exists customer_id`.execute(db);
  await sql`alter table customers drop column if exists external_id`.execute(db);
}
