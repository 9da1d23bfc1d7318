import { type Kysely, sql } from 'kysely';

/**
 * Concurrency control and safe retries (SPEC §7, §8).
 * `version` counts the writes to a row; it is the ETag, and `If-Match` compares against it in the
 * same UPDATE/DELETE that writes. An idempotency record is claimed by inserting its key: the
 * primary key makes one request the winner across every instance.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table leads add column version integer not null default 1 check (version >= 1)`.execute(db);
  await sql`alter table customers add column version integer not null default 1 check (version >= 1)`.execute(db);
  await sql`
    create table idempotency_keys (
      tenant_id uuid not null references tenants (id),
      key text not null check (char_length(key) between 1 and 255),
      request_hash text not null,
      state text not null check (state in ('running', 'done')),
      response_status integer,
      response_headers jsonb,
      response_body text,
      created_at timestamptz(3) not null default now(),
      started_at timestamptz(3) not null default now(),
      primary key (tenant_id, key),
      check (state = 'running' or (response_status is not null and response_body is not null))
    )`.execute(db);
  await sql`create index idempotency_keys_created_idx on idempotency_keys (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists idempotency_keys`.execute(db);
  await sql`alter table customers drop column if exists version`.execute(db);
  await sql`alter table leads drop column if exists version`.execute(db);
}
