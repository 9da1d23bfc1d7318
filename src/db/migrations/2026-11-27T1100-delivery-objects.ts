import { type Kysely, sql } from 'kysely';

/**
 * SPEC §17: an erasure reaches every stored copy of a person, webhook payloads included, even when
 * the event a delivery was made from is gone. Each delivery now keeps the id of the record its
 * event is about, indexed per tenant. Deliveries made before carry none (no backfill: a long
 * update of a busy table), and are found by their events, which outlive them no longer
 * (event-retention.ts prunes deliveries first).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_deliveries add column object_id uuid`.execute(db);
  await sql`
    create index webhook_deliveries_object_idx on webhook_deliveries (tenant_id, object_id)
    where object_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists webhook_deliveries_object_idx`.execute(db);
  await sql`alter table webhook_deliveries drop column if exists object_id`.execute(db);
}
