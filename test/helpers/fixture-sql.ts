import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../src/db/database.js';

/**
 * Runs bulk fixture statements (loads of thousands of rows, VACUUM) on one connection without the
 * statement timeout every query of the app carries (SPEC §10). They are setup, not the behaviour
 * under test, and a slow CI machine can take longer than the app's 3 s for them. PGlite has no
 * timeout to lift; `set` and `reset` are harmless there.
 */
export async function runFixture(db: Db, statements: readonly RawBuilder<unknown>[]): Promise<void> {
  await db.connection().execute(async (conn) => {
    await sql`set statement_timeout = 0`.execute(conn);
    try {
      for (const statement of statements) await statement.execute(conn);
    } finally {
      await sql`reset statement_timeout`.execute(conn);
    }
  });
}
