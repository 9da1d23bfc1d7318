import { type Kysely, sql } from 'kysely';
import { tokenScopes } from '../migration-helpers.js';

/** The scopes a token could hold before this migration (frozen: later ones add their own). */
const SCOPES_BEFORE = [
  'leads:read',
  'leads:write',
  'customers:read',
  'customers:write',
  'webhooks:read',
  'webhooks:write',
  'fields:write',
] as const;

/**
 * SPEC §17: the scopes of personal-data requests, and what an erasure leaves of events. A
 * redacted event keeps only its record's id (`object` is `{"id": …}`, `previous` `{}`), so the
 * feed still says that something changed, and when, without saying what; an erasure's own
 * `*.deleted` event carries `reason = 'erasure'`.
 *
 * Two small partial indexes find the records that held an e-mail and no longer do, without
 * reading a tenant's events: deleted ones by their delete event, changed ones by the events whose
 * `previous` shows an e-mail. (Records that hold it now are found by their own e-mail index; their
 * events by `events_tenant_object_idx`.)
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await tokenScopes(db, [...SCOPES_BEFORE, 'privacy:read', 'privacy:write']);
  await sql`
    alter table events
      add column redacted boolean not null default false,
      add column reason text check (reason in ('erasure'))`.execute(db);
  await sql`
    create index events_deleted_email_idx on events (tenant_id, (object ->> 'email'))
    where type in ('lead.deleted', 'customer.deleted')`.execute(db);
  await sql`
    create index events_former_email_idx on events (tenant_id, (previous ->> 'email'))
    where previous ? 'email'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists events_deleted_email_idx`.execute(db);
  await sql`drop index if exists events_former_email_idx`.execute(db);
  await sql`alter table events drop column if exists redacted, drop column if exists reason`.execute(db);
  await tokenScopes(db, SCOPES_BEFORE);
}
