import { type Kysely, sql } from 'kysely';

/**
 * SPEC §10: every list filter has an index that starts with the tenant, so that one tenant's
 * filtered lists read its own matching rows, newest first (the default sort), and not its whole
 * table or other tenants' rows. Score, e-mail and the dates already had theirs.
 */
const INDEXES = {
  leads_tenant_status_idx: sql`leads (tenant_id, status, created_at desc, id desc)`,
  leads_tenant_source_idx: sql`leads (tenant_id, source, created_at desc, id desc)`,
  customers_tenant_status_idx: sql`customers (tenant_id, status, created_at desc, id desc)`,
  customers_tenant_type_idx: sql`customers (tenant_id, type, created_at desc, id desc)`,
};

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, definition] of Object.entries(INDEXES)) {
    await sql`create index ${sql.id(name)} on ${definition}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of Object.keys(INDEXES)) await sql`drop index if exists ${sql.id(name)}`.execute(db);
}
