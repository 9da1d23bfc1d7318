import { type Kysely, sql } from 'kysely';
import PgBoss from 'pg-boss';
import { tokenScopes } from '../migration-helpers.js';

/**
 * SPEC §15: webhook subscriptions, their deliveries, and the job queue that makes the attempts.
 *
 * A subscription follows its tenant's change feed from its own position (`cursor_xid`,
 * `cursor_seq`: where the feed stood when it was made), so it receives the events of every
 * transaction still running then and of every later one; the dispatcher turns events into
 * deliveries and moves the position in one transaction.
 * A delivery keeps the JSON it sends (the event as the feed showed it) and its latest attempt; one
 * per subscription and event (the unique key refuses a second). Each attempt is logged too. A
 * subscription signs with its secret and with the former ones still in their 24 h overlap
 * (`previous_secrets`: `[{secret, until}]`, sealed like the secret).
 *
 * The queue is pg-boss's schema, installed here so that it is versioned with Funil's own; pg-boss
 * migrates it itself when a newer release needs to.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await tokenScopes(db, [
    'leads:read',
    'leads:write',
    'customers:read',
    'customers:write',
    'webhooks:read',
    'webhooks:write',
  ]);
  await sql`
    create table webhook_subscriptions (
      id uuid primary key,
      tenant_id uuid not null references tenants (id) on delete cascade,
      url text not null,
      description text,
      event_types text[] not null,
      families text[] not null,
      active boolean not null default true,
      disabled_reason text,
      secret text not null,
      previous_secrets jsonb not null default '[]',
      created_by uuid,
      cursor_xid xid8 not null,
      cursor_seq bigint not null default 0,
      failing_since timestamptz(3),
      created_at timestamptz(3) not null default now(),
      updated_at timestamptz(3) not null default now(),
      version integer not null default 1
    )`.execute(db);
  await sql`create index webhook_subscriptions_tenant_idx on webhook_subscriptions (tenant_id, created_at, id)`.execute(
    db,
  );
  await sql`create index webhook_subscriptions_active_idx on webhook_subscriptions (id) where active`.execute(db);
  await sql`
    create table webhook_deliveries (
      id uuid primary key,
      tenant_id uuid not null,
      subscription_id uuid not null references webhook_subscriptions (id) on delete cascade,
      event_id text not null,
      event_type text not null,
      payload text not null,
      status text not null check (status in ('pending', 'succeeded', 'failed')),
      tries integer not null default 0,
      next_attempt_at timestamptz(3),
      claimed_by uuid,
      claimed_until timestamptz(3),
      last_attempt_at timestamptz(3),
      last_http_status integer,
      last_error text,
      last_duration_ms integer,
      last_response text,
      created_at timestamptz(3) not null default now(),
      unique (subscription_id, event_id)
    )`.execute(db);
  await sql`
    create index webhook_deliveries_log_idx on webhook_deliveries (subscription_id, created_at desc, id desc)`.execute(
    db,
  );
  await sql`
    create index webhook_deliveries_pending_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(
    db,
  );
  // The delivery log's retention removes by age (FUNIL_EVENT_RETENTION_DAYS, as the feed's).
  await sql`create index webhook_deliveries_created_idx on webhook_deliveries (created_at)`.execute(db);
  await sql`
    create table webhook_attempts (
      delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
      try integer not null,
      attempted_at timestamptz(3) not null default now(),
      http_status integer,
      error text,
      duration_ms integer not null,
      response text,
      primary key (delivery_id, try, attempted_at)
    )`.execute(db);
  await sql.raw(queueSchema()).execute(db);
}

/** pg-boss's own schema, without its BEGIN and COMMIT: a migration already runs in a transaction. */
function queueSchema(): string {
  const plans = PgBoss.getConstructionPlans('pgboss').trim();
  if (!plans.startsWith('BEGIN;') || !plans.endsWith('COMMIT;')) {
    throw new Error('pg-boss construction plans are no longer one BEGIN … COMMIT block: revisit this migration');
  }
  return plans.slice('BEGIN;'.length, -'COMMIT;'.length);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await tokenScopes(db, ['leads:read', 'leads:write', 'customers:read', 'customers:write']);
  await sql`drop schema if exists pgboss cascade`.execute(db);
  await sql`drop table if exists webhook_attempts`.execute(db);
  await sql`drop table if exists webhook_deliveries`.execute(db);
  await sql`drop table if exists webhook_subscriptions`.execute(db);
}
