import { type Kysely, sql } from 'kysely';

/** The scopes a token may hold (the check of the initial migration, widened by later ones). */
export async function tokenScopes(db: Kysely<unknown>, scopes: readonly string[]): Promise<void> {
  await sql`alter table api_tokens drop constraint api_tokens_scopes_check`.execute(db);
  await sql`
    alter table api_tokens add constraint api_tokens_scopes_check check (
      cardinality(scopes) between 1 and ${sql.lit(scopes.length)} and scopes <@ ${sql.raw(
        `array[${scopes.map((scope) => `'${scope}'`).join(', ')}]`,
      )}::text[]
    )`.execute(db);
}
