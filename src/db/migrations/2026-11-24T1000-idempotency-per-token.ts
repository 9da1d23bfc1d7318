import { type Kysely, sql } from 'kysely';

/**
 * SPEC §7: an Idempotency-Key belongs to the token that sent it, so that one integration (a public
 * web form's token, say) cannot take or block another's keys. Records kept so far name no token;
 * they are replay caches of at most 24 hours, and are dropped rather than guessed an owner.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`delete from idempotency_keys`.execute(db);
  await sql`alter table idempotency_keys add column token_id uuid not null`.execute(db);
  await sql`alter table idempotency_keys drop constraint idempotency_keys_pkey`.execute(db);
  await sql`alter table idempotency_keys add primary key (tenant_id, token_id, key)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from idempotency_keys`.execute(db);
  await sql`alter table idempotency_keys drop constraint idempotency_keys_pkey`.execute(db);
  await sql`alter table idempotency_keys drop column token_id`.execute(db);
  await sql`alter table idempotency_keys add primary key (tenant_id, key)`.execute(db);
}
