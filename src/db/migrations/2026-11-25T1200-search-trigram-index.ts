import { type Kysely, sql } from 'kysely';

/**
 * Issue 21: one trigram index per table for `q` (SPEC §6) instead of one per searched column. Every
 * write of a lead or customer updated three GIN indexes; now it updates one holding the same
 * trigrams, which cost 12 % of a bulk insert and 15 % of a bulk status update of 30,000 leads.
 *
 * The columns are joined by U+001F (the unit separator), so a substring without that character
 * matches the joined text only where it matches one column: `q` keeps its meaning exactly with one
 * condition, which the planner prices right (db/search-text.ts spells the same expression; the plan
 * test fails if they drift apart, as the planner then ignores the index).
 *
 * The new indexes are built before the old ones go, and `if not exists` lets an operator build them
 * beforehand with CREATE INDEX CONCURRENTLY (README, Operating it).
 */
const TABLES = ['leads', 'customers'] as const;
const COLUMNS = ['name', 'email', 'phone'] as const;
const SEARCH_TEXT = sql.raw(
  `(coalesce(name, '') || E'\\x1f' || coalesce(email, '') || E'\\x1f' || coalesce(phone, ''))`,
);

async function extensions(db: Kysely<unknown>): Promise<{ trigram: boolean; tenantLed: boolean }> {
  const { rows } = await sql<{ extname: string }>`
    select extname from pg_extension where extname in ('pg_trgm', 'btree_gin')`.execute(db);
  const names = new Set(rows.map((row) => row.extname));
  return { trigram: names.has('pg_trgm'), tenantLed: names.has('pg_trgm') && names.has('btree_gin') };
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const { trigram, tenantLed } = await extensions(db);
  if (!trigram) return;
  for (const table of TABLES) {
    const name = tenantLed ? `${table}_tenant_search_trgm_idx` : `${table}_search_trgm_idx`;
    const keys = tenantLed ? sql`tenant_id, ${SEARCH_TEXT} gin_trgm_ops` : sql`${SEARCH_TEXT} gin_trgm_ops`;
    await sql`create index if not exists ${sql.id(name)} on ${sql.id(table)} using gin (${keys})`.execute(db);
  }
  for (const table of TABLES) {
    for (const column of COLUMNS) {
      await sql`drop index if exists ${sql.id(`${table}_tenant_${column}_trgm_idx`)}`.execute(db);
      await sql`drop index if exists ${sql.id(`${table}_${column}_trgm_idx`)}`.execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const { trigram, tenantLed } = await extensions(db);
  for (const table of TABLES) {
    if (!trigram) continue;
    for (const column of COLUMNS) {
      const name = tenantLed ? `${table}_tenant_${column}_trgm_idx` : `${table}_${column}_trgm_idx`;
      const keys = tenantLed ? sql`tenant_id, ${sql.id(column)} gin_trgm_ops` : sql`${sql.id(column)} gin_trgm_ops`;
      await sql`create index if not exists ${sql.id(name)} on ${sql.id(table)} using gin (${keys})`.execute(db);
    }
  }
  for (const table of TABLES) {
    await sql`drop index if exists ${sql.id(`${table}_tenant_search_trgm_idx`)}`.execute(db);
    await sql`drop index if exists ${sql.id(`${table}_search_trgm_idx`)}`.execute(db);
  }
}
