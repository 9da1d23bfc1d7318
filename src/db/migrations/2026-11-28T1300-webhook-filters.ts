import { type Kysely, sql } from 'kysely';

/**
 * SPEC §22: a webhook subscription's filter, as its API shows it (`types`, `changedFields`,
 * `where`, `excludeActors`); null when it has none. Checked by the application against its schema
 * when saved; the database holds that it is an object. No row is rewritten: the column is added null.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table webhook_subscriptions add column filter jsonb
      constraint webhook_subscriptions_filter_check check (jsonb_typeof(filter) = 'object')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_subscriptions drop column if exists filter`.execute(db);
}
