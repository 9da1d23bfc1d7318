import { type Kysely, sql } from 'kysely';

/**
 * SPEC §14: the change feed, written by the statement that makes each change.
 *
 * An event's place in the feed is (xid, seq): the writing transaction's id, then the order of
 * writing. A reader is shown only events whose transaction is older than every transaction still
 * running (`xid < pg_snapshot_xmin(pg_current_snapshot())`), so any event that becomes visible
 * later belongs to a transaction with a larger xid and sorts after everything shown already: a
 * reader following the feed never misses an event and never sees one twice. A sequence alone
 * would not do: a transaction that took seq 41 may commit after one that took 42.
 *
 * `object` is the row as the database holds it (`to_jsonb`), and `previous` the former values of
 * the columns that changed; the API shapes are made when the feed is read. No foreign keys: an
 * event outlives its record (a record's history after its delete) and belongs to no request.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table events (
      xid xid8 not null default pg_current_xact_id(),
      seq bigint generated always as identity,
      tenant_id uuid not null,
      type text not null,
      object_id uuid not null,
      occurred_at timestamptz(3) not null default clock_timestamp(),
      token_id uuid,
      request_id text,
      object jsonb not null,
      previous jsonb not null default '{}'
    )`.execute(db);
  await sql`create index events_tenant_position_idx on events (tenant_id, xid, seq)`.execute(db);
  await sql`create index events_tenant_object_idx on events (tenant_id, object_id, xid, seq)`.execute(db);
  await sql`create index events_occurred_idx on events (occurred_at)`.execute(db);
  // The position of the newest event pruned (SPEC §14: an older `after` is a 410).
  await sql`
    create table event_retention (
      singleton boolean primary key default true check (singleton),
      pruned_through_xid xid8 not null,
      pruned_through_seq bigint not null
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists event_retention`.execute(db);
  await sql`drop table if exists events`.execute(db);
}
