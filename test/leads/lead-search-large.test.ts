import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { runFixture } from '../helpers/fixture-sql.js';
import { assertEachOnce, walk } from '../helpers/list-walk.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const LEADS = `${API}/leads`;
const ROWS = 2_500;
const OLDTIMERS = 30;

/**
 * A search of a tenant larger than a few pages: on PostgreSQL it reads the first rows in the page's
 * order, then asks the trigram index for the rest (src/records/search-page.ts). Each step must hand over
 * to the next without losing or repeating a match, whichever of them answers a page.
 */
describeEachBackend('q on a tenant of thousands of leads (SPEC §6)', (ctx) => {
  let tenant: TestTenant;
  before(async () => {
    tenant = await ctx.tenant();
    // One lead a second, the newest first: every 40th a "Frequent", the 30 oldest "Aaa Oldtimer".
    await runFixture(ctx.db, [
      sql`
        insert into leads (id, tenant_id, name, email, status, score, created_by, created_at)
        select gen_random_uuid(), ${tenant.id},
          case when i > ${ROWS - OLDTIMERS} then 'Aaa Oldtimer ' || i when i % 40 = 0 then 'Frequent ' || i else 'Lead ' || i end,
          'lead' || i || '@example.com', 'new', 0, ${tenant.tokenId},
          timestamptz '2026-06-01T00:00:00Z' - i * interval '1 second'
        from generate_series(1, ${ROWS}::int) as i`,
      sql`analyze leads`,
    ]);
  });

  const expected = (prefix: string, count: number) =>
    Array.from({ length: ROWS }, (_, i) => i + 1)
      .filter((i) => (prefix === 'Aaa Oldtimer' ? i > ROWS - OLDTIMERS : i % 40 === 0 && i <= ROWS - OLDTIMERS))
      .map((i) => `${prefix} ${i}`)
      .slice(0, count);

  for (const [q, prefix, count] of [
    ['frequent', 'Frequent', 61],
    ['oldtimer', 'Aaa Oldtimer', OLDTIMERS],
  ] as const) {
    for (const limit of ['1', '10', '1000']) {
      it(`walks q=${q} in pages of ${limit}, newest first, each match once`, async () => {
        const { items } = await walk(ctx, tenant.token, LEADS, { q, limit }, 'cursor');
        assertEachOnce(items);
        assert.deepEqual(
          items.map((item) => item.name),
          expected(prefix, count),
        );
      });
    }
  }

  it('walks a term every lead matches, in pages of 1000, sorted by name, each lead once', async () => {
    const { items, pageSizes } = await walk(
      ctx,
      tenant.token,
      LEADS,
      { q: 'example.com', limit: '1000', sort: 'name' },
      'link',
    );
    assertEachOnce(items);
    assert.deepEqual(pageSizes, [1000, 1000, 500]);
  });
});
