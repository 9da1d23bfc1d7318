import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import { assertEachOnce, walk } from '../helpers/list-walk.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const SCAN_ROWS = 20;
const ROWS = 200;
const RARE = [37, 150, 151];
const name = (i: number) => `n${String(i).padStart(3, '0')}`;

/**
 * SPEC §10: a filtered page reads at most FUNIL_LIST_SCAN_ROWS rows (50,000 by default on the
 * embedded database), so one list cannot hold the database for seconds. A page that stops at the
 * bound is short, or empty, and carries a next cursor; following the cursors finds every match
 * exactly once, in order (SPEC §6).
 */
describeEachBackend(
  'a filtered list page reads a bounded number of rows (SPEC §10)',
  (ctx) => {
    let tenant: TestTenant;
    /** Leads n000…, scored i % 100, their source `rare` where `rare(i)` says so, else `web`. */
    const insertLeads = async (owner: TestTenant, count: number, rare: (i: number) => boolean) => {
      const rows = Array.from({ length: count }, (_, i) => ({
        id: newId(),
        tenantId: owner.id,
        name: name(i),
        email: `${name(i)}@example.com`,
        source: rare(i) ? 'rare' : 'web',
        status: 'new',
        score: i % 100,
        createdBy: owner.tokenId,
      }));
      await ctx.db.insertInto('leads').values(rows).execute();
    };
    const list = (query: Record<string, string>) => ctx.request('GET', `${API}/leads`, { token: tenant.token, query });

    before(async () => {
      tenant = await ctx.tenant();
      await insertLeads(tenant, ROWS, (i) => RARE.includes(i));
    });

    it('answers an empty page with a next cursor when the rows it may read hold no match', async () => {
      const res = await list({ source: 'rare', sort: 'name', limit: '10' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, []);
      assert.equal(typeof res.headers['x-next-cursor'], 'string');
    });

    for (const follow of ['cursor', 'link'] as const) {
      it(`finds every rare match exactly once, in order, by following the ${follow}`, async () => {
        const walked = await walk(
          ctx,
          tenant.token,
          `${API}/leads`,
          { source: 'rare', sort: 'name', limit: '10' },
          follow,
        );
        assert.deepEqual(
          walked.items.map((item) => item.name),
          RARE.map(name),
        );
        // Each page read at most SCAN_ROWS rows: ROWS / SCAN_ROWS pages, the last one ending the list.
        assert.ok(walked.pageSizes.length >= ROWS / SCAN_ROWS, walked.pageSizes.join(','));
      });
    }

    it('fills a page, and stops there, when the rows read hold enough matches', async () => {
      const res = await list({ source: 'web', sort: 'name', limit: '5' });
      assert.deepEqual(
        res.body.map((item: { name: string }) => item.name),
        [0, 1, 2, 3, 4].map(name),
      );
      const walked = await walk(
        ctx,
        tenant.token,
        `${API}/leads`,
        { source: 'web', sort: '-name', limit: '15' },
        'cursor',
      );
      assertEachOnce(walked.items);
      const expected = Array.from({ length: ROWS }, (_, i) => ROWS - 1 - i).filter((i) => !RARE.includes(i));
      assert.deepEqual(
        walked.items.map((item) => item.name),
        expected.map(name),
      );
    });

    it('keeps the bound on searches and ranges too', async () => {
      const search = await walk(
        ctx,
        tenant.token,
        `${API}/leads`,
        { q: 'n15', sort: 'createdAt', limit: '50' },
        'cursor',
      );
      assert.deepEqual(
        search.items.map((item) => item.name).sort(),
        [150, 151, 152, 153, 154, 155, 156, 157, 158, 159].map(name),
      );
      assert.ok(search.pageSizes.length >= ROWS / SCAN_ROWS);
      const range = await walk(
        ctx,
        tenant.token,
        `${API}/leads`,
        { scoreMin: '99', sort: 'score', limit: '50' },
        'cursor',
      );
      assert.deepEqual(
        range.items.map((item) => item.name),
        [99, 199].map(name),
      );
    });

    it('keeps the planner its plans for a tenant that holds no more rows than the bound: no empty pages there', async () => {
      const small = await ctx.tenant();
      await insertLeads(small, SCAN_ROWS, (i) => i === SCAN_ROWS - 1);
      const res = await ctx.request('GET', `${API}/leads`, {
        token: small.token,
        query: { source: 'rare', sort: 'name', limit: '10' },
      });
      assert.deepEqual(
        res.body.map((item: { name: string }) => item.name),
        [name(SCAN_ROWS - 1)],
      );
      assert.equal(res.headers['x-next-cursor'], undefined);
    });

    it('does not bound a list without filters, nor an exact e-mail, which an index answers', async () => {
      const all = await list({ limit: '100' });
      assert.equal(all.body.length, 100);
      const byEmail = await list({ email: `${name(151)}@example.com`, sort: 'name' });
      assert.deepEqual(
        byEmail.body.map((item: { name: string }) => item.name),
        [name(151)],
      );
      assert.equal(byEmail.headers['x-next-cursor'], undefined);
    });
  },
  { FUNIL_LIST_SCAN_ROWS: String(SCAN_ROWS) },
);
