import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { ids, nextLink } from '../helpers/list-walk.js';
import { type Answer, API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { insertLeads } from './lead-bulk.js';

const LEADS = `${API}/leads`;
const ROWS = 300;
const WRITERS = 4;
const UPDATES_PER_WRITER = 25;
const LIMIT = 5;
/** Pages the walker reads while the writers run; then it waits for them and reads to the end. */
const PAGES_DURING_WRITES = 30;
/** insertLeads spreads updatedAt over 2026-02-01T00:00–00:22; rows before this are out of the walk. */
const SINCE = '2026-02-01T00:05:00.000Z';

interface Sighting {
  updatedAt: string;
  score: number;
}

/**
 * An update locks its row before it takes updated_at (clock_timestamp()), so a write that waited on
 * another gets a later time than it, and a walker by updatedAt meets it ahead, not behind.
 */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeEachBackend('GET /leads?sort=updatedAt&updatedSince=T while others write (SPEC §6 sync)', (ctx) => {
  let tenant: TestTenant;
  let leadIds: string[];

  before(async () => {
    tenant = await ctx.tenant('Synced');
    leadIds = await insertLeads(ctx, tenant, ROWS);
  });

  it('sees every untouched row exactly once and every row changed during the walk at least once, last in its latest state (SPEC §6)', async () => {
    const initial = await ctx.db
      .selectFrom('leads')
      .select(['id', 'updatedAt'])
      .where('tenantId', '=', tenant.id)
      .execute();
    const inScopeAtStart = new Set(initial.filter((row) => row.updatedAt >= new Date(SINCE)).map((row) => row.id));
    assert.ok(inScopeAtStart.size > 200 && inScopeAtStart.size < ROWS, 'some rows start before updatedSince');

    const sightings = new Map<string, Sighting[]>();
    const touched = new Set<string>();
    let walking = true;
    let updatesDuringWalk = 0;
    let page = await ctx.request('GET', LEADS, {
      token: tenant.token,
      query: { sort: 'updatedAt', updatedSince: SINCE, limit: String(LIMIT) },
    });

    // Writers update random rows (some twice, some from before updatedSince) through the API.
    const writer = async (seed: number) => {
      for (let n = 0; n < UPDATES_PER_WRITER; n++) {
        const id = leadIds[Math.floor(Math.random() * leadIds.length)] as string;
        touched.add(id);
        const res = await ctx.request('PUT', `${LEADS}/${id}`, {
          token: tenant.token,
          body: { score: (seed * 31 + n * 7) % 101, notes: `writer ${seed} update ${n}` },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        if (walking) updatesDuringWalk++;
        await pause(Math.random() * 3);
      }
    };
    const writers = Promise.all(Array.from({ length: WRITERS }, (_, seed) => writer(seed)));

    for (let pages = 1; ; pages++) {
      assert.equal(page.status, 200, JSON.stringify(page.body));
      for (const item of page.body) {
        const seen = sightings.get(item._id) ?? [];
        seen.push({ updatedAt: item.updatedAt, score: item.score });
        sightings.set(item._id, seen);
        assert.ok(item.updatedAt >= SINCE, `${item._id} updated at ${item.updatedAt}, before updatedSince`);
      }
      // Every write must be answered before the walk ends, or "latest state" means nothing.
      if (pages === PAGES_DURING_WRITES) await writers;
      const link = nextLink(page);
      if (!link) break;
      assert.ok(pages < 500, 'the walk does not end');
      page = await ctx.request('GET', `${link.pathname}${link.search}`, { token: tenant.token });
    }
    walking = false;
    await writers;
    assert.ok(updatesDuringWalk >= 20, `only ${updatesDuringWalk} updates overlapped the walk`);

    const final = await ctx.db
      .selectFrom('leads')
      .select(['id', 'updatedAt', 'score'])
      .where('tenantId', '=', tenant.id)
      .execute();
    let touchedInScope = 0;
    for (const row of final) {
      const seen = sightings.get(row.id) ?? [];
      if (!touched.has(row.id)) {
        assert.equal(seen.length, inScopeAtStart.has(row.id) ? 1 : 0, `untouched row ${row.id} seen ${seen.length}×`);
        continue;
      }
      touchedInScope++;
      assert.ok(seen.length >= 1, `row ${row.id} was changed during the walk and never seen`);
      const last = seen[seen.length - 1] as Sighting;
      assert.deepEqual(
        last,
        { updatedAt: row.updatedAt.toISOString(), score: row.score },
        `row ${row.id}: last seen in a stale state`,
      );
    }
    assert.ok(touchedInScope >= 60, `only ${touchedInScope} distinct rows were touched`);
  });

  it('still shows a row changed while the walk chases the newest rows in its latest state (SPEC §6)', {}, async () => {
    const chased = await ctx.tenant('Chased');
    const rowIds = await insertLeads(ctx, chased, 150);
    const sightings = new Map<string, string>();
    const updates: { id: string; end: number }[] = [];
    let walking = true;
    // Writers go on for as long as the walk lasts (bounded): the walker has to catch up with them.
    const deadline = performance.now() + 10_000;
    const writer = async () => {
      while (walking && performance.now() < deadline) {
        const id = rowIds[Math.floor(Math.random() * rowIds.length)] as string;
        const res = await ctx.request('PUT', `${LEADS}/${id}`, {
          token: chased.token,
          // A note of its own: an update that changes nothing would write nothing (SPEC §14).
          body: { score: updates.length % 101, notes: `update ${updates.length} ${Math.random()}` },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        updates.push({ id, end: performance.now() });
        // PGlite has one connection: unpaced, the writers would crowd the walker out of it.
        if (ctx.backend === 'pglite') await pause(2);
      }
    };
    const writers = Promise.all(Array.from({ length: 4 }, writer));
    let page = await ctx.request('GET', LEADS, {
      token: chased.token,
      query: { sort: 'updatedAt', updatedSince: SINCE, limit: String(LIMIT) },
    });
    let lastRequestStart = 0;
    for (let pages = 1; ; pages++) {
      assert.equal(page.status, 200, JSON.stringify(page.body));
      for (const item of page.body) sightings.set(item._id, item.updatedAt);
      const link = nextLink(page);
      if (!link) break;
      assert.ok(pages < 2000, 'the walk does not end');
      // Let the writers' timers run: on PGlite the walk alone could keep the event loop busy.
      await new Promise(setImmediate);
      lastRequestStart = performance.now();
      page = await ctx.request('GET', `${link.pathname}${link.search}`, { token: chased.token });
    }
    walking = false;
    await writers;
    // A row is judged only when every write to it was answered before the walk's last request was sent.
    const late = new Set(updates.filter((update) => update.end >= lastRequestStart).map((update) => update.id));
    const judged = new Set(updates.map((update) => update.id).filter((id) => !late.has(id)));
    assert.ok(judged.size >= 20, `only ${judged.size} rows were changed early enough to judge`);
    const final = await ctx.db
      .selectFrom('leads')
      .select(['id', 'updatedAt'])
      .where('tenantId', '=', chased.id)
      .execute();
    const stale = final.filter((row) => judged.has(row.id) && sightings.get(row.id) !== row.updatedAt.toISOString());
    assert.deepEqual(
      stale.map((row) => `${row.id}: last seen ${sightings.get(row.id)}, now ${row.updatedAt.toISOString()}`),
      [],
    );
  });

  it('shows a row whose update waited on a row lock, in its latest state, to a walker already past its timestamp (SPEC §6)', {
    skip: ctx.backend === 'pglite' ? 'PGlite has one connection: no write can wait on another' : false,
  }, async () => {
    const locked = await ctx.tenant('Locked');
    const [x, y, z] = (await insertLeads(ctx, locked, 3)) as [string, string, string];
    const since = new Date(Date.now() - 1000).toISOString();
    const put = (id: string) =>
      ctx.request('PUT', `${LEADS}/${id}`, { token: locked.token, body: { notes: `changed ${id}` } });
    const seen: string[] = [];
    let page: Answer | undefined;
    let writeX: Promise<Answer> | undefined;
    // Another session holds x's row lock (as a concurrent writer's transaction would) while the walk starts.
    await ctx.db.transaction().execute(async (trx) => {
      await trx.selectFrom('leads').select('id').where('id', '=', x).forUpdate().execute();
      writeX = put(x);
      for (let waited = 0; ; waited += 10) {
        const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`.execute(ctx.db);
        if ((waiting.rows[0]?.n ?? 0) > 0) break;
        assert.ok(waited < 5_000, 'the update of x never waited on the lock');
        await pause(10);
      }
      assert.equal((await put(y)).status, 200);
      assert.equal((await put(z)).status, 200);
      page = await ctx.request('GET', LEADS, {
        token: locked.token,
        query: { sort: 'updatedAt', updatedSince: since, limit: '1' },
      });
      seen.push(...ids(page.body));
    });
    // The lock is gone: x's update commits and is answered before the walk goes on.
    assert.equal((await (writeX as Promise<Answer>)).status, 200);
    for (let link = nextLink(page as Answer); link; link = nextLink(page as Answer)) {
      page = await ctx.request('GET', `${link.pathname}${link.search}`, { token: locked.token });
      seen.push(...ids(page.body));
    }
    assert.deepEqual(seen.sort(), [x, y, z].sort(), 'x was changed during the walk and never seen');
  });
});
