import { type Kysely, sql } from 'kysely';

/**
 * SPEC §21: the keys duplicates are found by. Each lead and customer keeps its normalised e-mail
 * and its phone in E.164 (`match_email`, `match_phone`), written by the application with every
 * write (the phone is read in the tenant's `phone_country`), each indexed per tenant for the
 * records that have one.
 *
 * The columns are added empty, so no row is rewritten here; the rows of before are given their
 * keys in the background, in batches of their own transactions (MatchKeyBackfill), from the
 * position kept in `match_key_backfills`. The indexes are built on columns that are all null at
 * this point: a read of each table, under a lock that holds writes back for as long.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table tenants add column phone_country text not null default 'BR' check (phone_country ~ '^[A-Z]{2}$')`.execute(
    db,
  );
  for (const table of ['leads', 'customers']) {
    await sql`alter table ${sql.table(table)} add column match_email text, add column match_phone text`.execute(db);
    await sql`create index ${sql.raw(`${table}_tenant_match_email_idx`)} on ${sql.table(table)} (tenant_id, match_email, id)
      where match_email is not null`.execute(db);
    await sql`create index ${sql.raw(`${table}_tenant_match_phone_idx`)} on ${sql.table(table)} (tenant_id, match_phone, id)
      where match_phone is not null`.execute(db);
  }
  await sql`
    create table match_key_backfills (
      table_name text primary key check (table_name in ('leads', 'customers')),
      after_id uuid
    )`.execute(db);
  await sql`insert into match_key_backfills (table_name) values ('leads'), ('customers')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists match_key_backfills`.execute(db);
  for (const table of ['leads', 'customers']) {
    await sql`alter table ${sql.table(table)} drop column if exists match_email, drop column if exists match_phone`.execute(
      db,
    );
  }
  await sql`alter table tenants drop column if exists phone_country`.execute(db);
}
