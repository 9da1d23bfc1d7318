import { type Kysely, sql } from 'kysely';

/**
 * SPEC §23: exports, run in the background, their files kept 24 hours.
 *
 * `exports` holds each export's request (resource, format, the list's query, the fields), its
 * progress and its times; `export_chunks` its file, in pieces: each chunk is one gzip member (a
 * page of rows, the first one with the header), and members laid end to end are one gzip stream
 * (RFC 1952), so a client that takes gzip gets the stored bytes as they are. A run that starts
 * over (after a crash) removes its chunks first.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table exports (
      tenant_id uuid not null references tenants (id) on delete cascade,
      id uuid not null,
      resource text not null check (resource in ('lead', 'customer')),
      format text not null check (format in ('csv', 'ndjson')),
      query jsonb not null default '{}',
      fields jsonb,
      status text not null default 'queued'
        check (status in ('queued', 'running', 'succeeded', 'failed', 'expired')),
      total integer,
      processed integer not null default 0 check (processed >= 0),
      file_bytes bigint,
      runs integer not null default 0,
      token_id uuid,
      created_at timestamptz(3) not null default now(),
      started_at timestamptz(3),
      finished_at timestamptz(3),
      expires_at timestamptz(3),
      primary key (tenant_id, id)
    )`.execute(db);
  await sql`create index exports_expires_idx on exports (expires_at) where expires_at is not null`.execute(db);
  await sql`create index exports_unfinished_idx on exports (created_at) where status in ('queued', 'running')`.execute(
    db,
  );
  await sql`
    create table export_chunks (
      tenant_id uuid not null,
      export_id uuid not null,
      seq integer not null,
      data bytea not null,
      primary key (tenant_id, export_id, seq),
      foreign key (tenant_id, export_id) references exports (tenant_id, id) on delete cascade
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists export_chunks`.execute(db);
  await sql`drop table if exists exports`.execute(db);
}
