import { type Kysely, sql } from 'kysely';

/**
 * SPEC §23: imports, as jobs.
 *
 * `imports` is the job and its progress; `next_row` is the first row (from 0) the next step applies,
 * moved by the step's own transaction, so that a step offered twice (its instance died after the
 * commit) is applied once. `import_chunks` holds the file's rows, as they were read from the
 * upload (at most 1,000 per chunk), until the import ends; `import_errors` the rows refused, with
 * the §2 code and message (each language) of each fault. An import's changes are its events
 * (request id `import:<id>`); `import_records` names each record it created or updated, with the
 * version it left, for its revert, which takes the values before from those events and leaves a
 * record changed since (another version) as it is. `revert_after` is where a revert has come to
 * (in record id order), moved by each step's own transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events drop constraint if exists events_reason_check`.execute(db);
  await sql`
    alter table events add constraint events_reason_check check (reason in ('erasure', 'merge', 'unmerge', 'revert'))`.execute(
    db,
  );
  await sql`
    create table imports (
      tenant_id uuid not null references tenants (id) on delete cascade,
      id uuid not null,
      resource text not null check (resource in ('lead', 'customer')),
      format text not null check (format in ('csv', 'ndjson')),
      upsert text check (upsert in ('email', 'externalId')),
      dry_run boolean not null default false,
      status text not null check (status in ('receiving', 'queued', 'running', 'succeeded', 'failed', 'cancelled')),
      token_id uuid,
      columns text[],
      delimiter text,
      total integer not null default 0,
      processed integer not null default 0,
      created integer not null default 0,
      updated integer not null default 0,
      failed integer not null default 0,
      next_row integer not null default 0,
      created_at timestamptz(3) not null default now(),
      started_at timestamptz(3),
      finished_at timestamptz(3),
      revert_status text check (revert_status in ('running', 'succeeded')),
      revert_after uuid,
      revert_deleted integer not null default 0,
      revert_restored integer not null default 0,
      revert_skipped integer not null default 0,
      revert_started_at timestamptz(3),
      revert_finished_at timestamptz(3),
      primary key (tenant_id, id)
    )`.execute(db);
  await sql`create unique index imports_id_idx on imports (id)`.execute(db);
  await sql`create index imports_unfinished_idx on imports (created_at) where status in ('receiving', 'queued', 'running')`.execute(
    db,
  );
  await sql`
    create table import_chunks (
      import_id uuid not null references imports (id) on delete cascade,
      seq integer not null,
      first_row integer not null,
      rows jsonb not null,
      primary key (import_id, seq)
    )`.execute(db);
  await sql`
    create table import_errors (
      import_id uuid not null references imports (id) on delete cascade,
      phase text not null check (phase in ('import', 'revert')),
      row integer not null,
      n smallint not null,
      field text,
      code text not null,
      message jsonb not null,
      record_id uuid,
      primary key (import_id, phase, row, n)
    )`.execute(db);
  await sql`
    create table import_records (
      import_id uuid not null references imports (id) on delete cascade,
      record_id uuid not null,
      row integer not null,
      created boolean not null,
      version integer not null,
      primary key (import_id, record_id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists import_records`.execute(db);
  await sql`drop table if exists import_errors`.execute(db);
  await sql`drop table if exists import_chunks`.execute(db);
  await sql`drop table if exists imports`.execute(db);
  await sql`alter table events drop constraint if exists events_reason_check`.execute(db);
  await sql`alter table events add constraint events_reason_check check (reason in ('erasure', 'merge', 'unmerge'))`.execute(
    db,
  );
}
