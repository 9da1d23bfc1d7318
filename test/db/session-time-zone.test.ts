import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { describeEachBackend } from '../helpers/test-app.js';

describeEachBackend('database sessions run in UTC (lists read timestamps as text)', (ctx) => {
  it('sets every pooled connection to UTC before its first query', async () => {
    // Several at once, so that the pool opens several connections (PGlite has one).
    const zones = await Promise.all(
      Array.from({ length: 6 }, () =>
        ctx.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ TimeZone: string }>`show time zone`.execute(trx);
          await sql`select pg_sleep(0.05)`.execute(trx);
          return rows[0]?.TimeZone;
        }),
      ),
    );
    assert.deepEqual(new Set(zones), new Set(['UTC']));
  });
});
