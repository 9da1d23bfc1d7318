import { type Kysely, sql } from 'kysely';

/**
 * SPEC §10: `q` reads only the caller's own matches. The trigram indexes of 2026-11-21T1200 hold
 * every tenant's rows, so one tenant with a million names like "silva" made another tenant's
 * `q=silva` fetch and discard them all. With btree_gin, a GIN index can lead with the tenant, and
 * the index itself intersects "this tenant" with "these trigrams" before any row is read.
 * Without btree_gin (or pg_trgm), the old indexes stay and `q` still works.
 */
const INDEXES = [
  ['leads', 'name'],
  ['leads', 'email'],
  ['leads', 'phone'],
  ['customers', 'name'],
  ['customers', 'email'],
  ['customers', 'phone'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    do $$
    begin
      create extension if not exists btree_gin;
    exception when others then
      raise notice 'btree_gin is not available: q searches use trigram indexes shared by all tenants';
    end
    $$`.execute(db);
  const { rows } = await sql<{ count: number }>`
    select count(*)::int as count from pg_extension where extname in ('pg_trgm', 'btree_gin')`.execute(db);
  if (rows[0]?.count !== 2) return;
  for (const [table, column] of INDEXES) {
    await sql`create index ${sql.id(`${table}_tenant_${column}_trgm_idx`)}
      on ${sql.id(table)} using gin (tenant_id, ${sql.id(column)} gin_trgm_ops)`.execute(db);
    await sql`drop index if exists ${sql.id(`${table}_${column}_trgm_idx`)}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ count: number }>`
    select count(*)::int as count from pg_extension where extname = 'pg_trgm'`.execute(db);
  for (const [table, column] of INDEXES) {
    await sql`drop index if exists ${sql.id(`${table}_tenant_${column}_trgm_idx`)}`.execute(db);
    if (rows[0]?.count === 1) {
      await sql`create index if not exists ${sql.id(`${table}_${column}_trgm_idx`)}
        on ${sql.id(table)} using gin (${sql.id(column)} gin_trgm_ops)`.execute(db);
    }
  }
}
