import type { Kysely } from 'kysely';
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
  'privacy:read',
  'privacy:write',
] as const;

/** SPEC §5.7: `leads:create`, the scope for code shipped to browsers (a website form). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await tokenScopes(db, [...SCOPES_BEFORE, 'leads:create']);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await tokenScopes(db, SCOPES_BEFORE);
}
