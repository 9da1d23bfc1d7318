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
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await tokenScopes(db, [...SCOPES_BEFORE, 'privacy:read', 'privacy:write']);
  await sql`
    alter table events
      add column redacted boolean not null default false,
      add column reason text check (reason in ('erasure'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events drop column if exists redacted, drop column if exists reason`.execute(db);
  await tokenScopes(db, SCOPES_BEFORE);
}
