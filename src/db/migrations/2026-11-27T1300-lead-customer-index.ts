import { type Kysely, sql } from 'kysely';

/**
 * SPEC §13: deleting a customer clears `customerId` on the leads converted to it, in the same
 * transaction; this finds them without reading the tenant's leads. Partial: most leads are never
 * converted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index leads_tenant_customer_idx on leads (tenant_id, customer_id) where customer_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists leads_tenant_customer_idx`.execute(db);
}
