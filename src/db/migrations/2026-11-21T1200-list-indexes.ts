import { type Kysely, sql } from 'kysely';

/**
 * Lists (SPEC §6). One B-tree per documented sort (SPEC §6), each led by the tenant and ended by the id, so that
 * a keyset page is an index range scan inside the tenant in either direction.
 * A never-contacted lead sorts as contacted at -infinity: the expression index holds that order.
 * Substring search (`q`) uses trigram indexes when pg_trgm can be installed; without it, the
 * search still works, by scanning the tenant's rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Secrets every instance shares, such as the key that signs list cursors; made by the application.
  await sql`create table app_secrets (name text primary key, value text not null)`.execute(db);
  await sql`create index leads_tenant_updated_idx on leads (tenant_id, updated_at, id)`.execute(db);
  await sql`create index leads_tenant_name_idx on leads (tenant_id, name, id)`.execute(db);
  await sql`create index leads_tenant_score_idx on leads (tenant_id, score, id)`.execute(db);
  await sql`create index leads_tenant_last_contact_idx
    on leads (tenant_id, (coalesce(last_contact, '-infinity'::timestamptz)), id)`.execute(db);
  await sql`create index leads_tenant_email_idx on leads (tenant_id, email)`.execute(db);
  await sql`create index customers_tenant_updated_idx on customers (tenant_id, updated_at, id)`.execute(db);
  await sql`create index customers_tenant_name_idx on customers (tenant_id, name, id)`.execute(db);

  await sql`
    do $$
    begin
      create extension if not exists pg_trgm;
    exception when others then
      raise notice 'pg_trgm is not available: q searches will scan instead of using a trigram index';
    end
    $$`.execute(db);
  await sql`
    do $$
    begin
      if exists (select 1 from pg_extension where extname = 'pg_trgm') then
        create index leads_name_trgm_idx on leads using gin (name gin_trgm_ops);
        create index leads_email_trgm_idx on leads using gin (email gin_trgm_ops);
        create index leads_phone_trgm_idx on leads using gin (phone gin_trgm_ops);
        create index customers_name_trgm_idx on customers using gin (name gin_trgm_ops);
        create index customers_email_trgm_idx on customers using gin (email gin_trgm_ops);
        create index customers_phone_trgm_idx on customers using gin (phone gin_trgm_ops);
      end if;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of [
    'leads_tenant_updated_idx',
    'leads_tenant_name_idx',
    'leads_tenant_score_idx',
    'leads_tenant_last_contact_idx',
    'leads_tenant_email_idx',
    'customers_tenant_updated_idx',
    'customers_tenant_name_idx',
    'leads_name_trgm_idx',
    'leads_email_trgm_idx',
    'leads_phone_trgm_idx',
    'customers_name_trgm_idx',
    'customers_email_trgm_idx',
    'customers_phone_trgm_idx',
  ]) {
    await sql`drop index if exists ${sql.id(index)}`.execute(db);
  }
  await sql`drop table if exists app_secrets`.execute(db);
}
