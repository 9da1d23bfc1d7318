import { type Kysely, sql } from 'kysely';

/**
 * SPEC §15: a retry by hand of a delivery that waits for its next automatic try sends at once and
 * replaces that try. The try's job is still in the queue (it cannot be moved); when it comes, the
 * attempt it was for has been made, and `replaced_attempt` says that this is expected, not a
 * duplicate job.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_deliveries add column replaced_attempt integer`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_deliveries drop column if exists replaced_attempt`.execute(db);
}
