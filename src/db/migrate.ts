import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import type { Db } from './database.js';
import * as initial from './migrations/2026-11-21T1000-initial.js';
import * as listIndexes from './migrations/2026-11-21T1200-list-indexes.js';
import * as versionsIdempotency from './migrations/2026-11-21T1400-versions-idempotency.js';
import * as idempotencyPerToken from './migrations/2026-11-24T1000-idempotency-per-token.js';
import * as filterIndexes from './migrations/2026-11-24T1100-filter-indexes.js';
import * as tenantTrigramIndexes from './migrations/2026-11-24T1200-tenant-trigram-indexes.js';
import * as externalIds from './migrations/2026-11-24T1300-external-ids.js';
import * as events from './migrations/2026-11-24T1400-events.js';
import * as webhooks from './migrations/2026-11-24T1500-webhooks.js';
import * as customFields from './migrations/2026-11-25T1000-custom-fields.js';
import * as personalData from './migrations/2026-11-25T1100-personal-data.js';
import * as searchTrigramIndex from './migrations/2026-11-25T1200-search-trigram-index.js';
import * as leadsCreateScope from './migrations/2026-11-27T1000-leads-create-scope.js';
import * as deliveryObjects from './migrations/2026-11-27T1100-delivery-objects.js';
import * as replacedAttempts from './migrations/2026-11-27T1200-replaced-attempts.js';
import * as leadCustomerIndex from './migrations/2026-11-27T1300-lead-customer-index.js';
import * as pipelines from './migrations/2026-11-28T1000-pipelines.js';
import * as matchKeys from './migrations/2026-11-28T1100-match-keys.js';
import * as merges from './migrations/2026-11-28T1200-merges.js';
import * as webhookFilters from './migrations/2026-11-28T1300-webhook-filters.js';
import * as imports from './migrations/2026-11-29T1000-imports.js';
import * as exportFiles from './migrations/2026-11-29T1100-exports.js';

/** Every migration, by name; names sort in the order they run. */
const migrations: Record<string, Migration> = {
  '2026-11-21T1000-initial': initial,
  '2026-11-21T1200-list-indexes': listIndexes,
  '2026-11-21T1400-versions-idempotency': versionsIdempotency,
  '2026-11-24T1000-idempotency-per-token': idempotencyPerToken,
  '2026-11-24T1100-filter-indexes': filterIndexes,
  '2026-11-24T1200-tenant-trigram-indexes': tenantTrigramIndexes,
  '2026-11-24T1300-external-ids': externalIds,
  '2026-11-24T1400-events': events,
  '2026-11-24T1500-webhooks': webhooks,
  '2026-11-25T1000-custom-fields': customFields,
  '2026-11-25T1100-personal-data': personalData,
  '2026-11-25T1200-search-trigram-index': searchTrigramIndex,
  '2026-11-27T1000-leads-create-scope': leadsCreateScope,
  '2026-11-27T1100-delivery-objects': deliveryObjects,
  '2026-11-27T1200-replaced-attempts': replacedAttempts,
  '2026-11-27T1300-lead-customer-index': leadCustomerIndex,
  '2026-11-28T1000-pipelines': pipelines,
  '2026-11-28T1100-match-keys': matchKeys,
  '2026-11-28T1200-merges': merges,
  '2026-11-28T1300-webhook-filters': webhookFilters,
  '2026-11-29T1000-imports': imports,
  '2026-11-29T1100-exports': exportFiles,
};

/** An arbitrary constant shared by every Funil instance: the key of the start-up advisory lock. */
const STARTUP_LOCK_KEY = 0x66756e69;

/**
 * Runs `work` on one connection while holding a session advisory lock, so that instances
 * starting at the same moment migrate (and bootstrap) one after the other.
 */
export async function withStartupLock<T>(db: Db, work: (conn: Db) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    // Waiting for another instance's migrations, and migrating a large table, may both take far
    // longer than the statement timeout meant for requests: this one session has none.
    await sql`set statement_timeout = 0`.execute(conn);
    await sql`select pg_advisory_lock(${STARTUP_LOCK_KEY})`.execute(conn);
    try {
      return await work(conn);
    } finally {
      await sql`select pg_advisory_unlock(${STARTUP_LOCK_KEY})`.execute(conn);
      await sql`reset statement_timeout`.execute(conn);
    }
  });
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  const { error, results } = await migratorOf(db).migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Brings the schema to the state after the migration `name`, undoing the later ones (the tests
 * and benches of a migration start from the schema before it, as an upgrade does).
 */
export async function migrateTo(db: Db, name: string): Promise<void> {
  const { error } = await migratorOf(db).migrateTo(name);
  if (error) throw error;
}

function migratorOf(db: Db): Migrator {
  return new Migrator({
    db: db.withoutPlugins() as Kysely<unknown>,
    provider: { getMigrations: async () => migrations },
  });
}
