import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { sql } from 'kysely';
import type { LeadService } from '../../src/leads/lead.service.js';
import { feedSettled } from '../helpers/feed.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

interface FeedEvent {
  id: string;
  type: string;
  data: { object: { _id: string } };
}

/**
 * SPEC §14: a reader that follows `after` never misses an event and never sees one twice,
 * whatever order concurrent writers commit in. A feed ordered by a sequence number alone fails
 * both tests below on PostgreSQL: a transaction that takes a number and commits after a later
 * number was read is skipped for good.
 */
describeEachBackend('the change feed in commit order (SPEC §14)', (ctx) => {
  let tenant: TestTenant;
  let leads: LeadService;

  before(async () => {
    tenant = await ctx.tenant('Feed order');
    leads = ctx.services().leads;
  });

  const actor = () => ({ tenantId: tenant.id, tokenId: tenant.tokenId });
  const read = async (after?: string): Promise<{ events: FeedEvent[]; next?: string }> => {
    const res = await ctx.request('GET', `${API}/events`, {
      token: tenant.token,
      query: { limit: '50', ...(after ? { after } : {}) },
      feedAsItStands: true,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return { events: res.body, next: res.headers['x-next-cursor'] as string | undefined };
  };

  it('holds back a committed event while an earlier writer is still open, then shows both in order', async () => {
    // PGlite runs one transaction at a time: no write can commit while another is open.
    if (ctx.backend !== 'postgres') return;
    await feedSettled(ctx.db, tenant.id);
    const { events: before } = await read();
    const start = before.at(-1)?.id;
    let commit!: () => void;
    const held = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let firstId = '';
    const first = ctx.db.transaction().execute(async (trx) => {
      firstId = (await leads.create(trx, actor(), { name: 'Wrote first, commits last', phone: '1' })).object._id;
      await held;
    });
    while (!firstId) await setTimeout(5);
    const second = await leads.create(ctx.db, actor(), { name: 'Wrote second, commits first', phone: '2' });
    const during = await read(start);
    assert.deepEqual(during.events, [], 'nothing after the open transaction’s event is shown yet');
    commit();
    await first;
    await feedSettled(ctx.db, tenant.id);
    const afterwards = await read(start);
    assert.deepEqual(
      afterwards.events.map((event) => event.data.object._id),
      [firstId, second.object._id],
    );
  });

  it('a tailing reader sees every event of many concurrent writers exactly once', async () => {
    const writers = 6;
    const writesEach = 25;
    // On PostgreSQL each write waits a random while inside its transaction before it commits, so
    // that commits come in another order than the sequence numbers were taken.
    const pause = ctx.backend === 'postgres' ? sql`select pg_sleep(random() * 0.02)` : undefined;
    let writing = true;
    const write = async (writer: number) => {
      for (let i = 0; i < writesEach; i++) {
        await ctx.db.transaction().execute(async (trx) => {
          const lead = await leads.create(trx, actor(), { name: `Writer ${writer} #${i}`, phone: String(i) });
          if (i % 3 === 0) await leads.setStatus(trx, actor(), lead.object._id, 'contacted');
          if (pause) await pause.execute(trx);
        });
      }
    };
    await feedSettled(ctx.db, tenant.id);
    const { events: before } = await read();
    let after = before.at(-1)?.id;
    const seen: string[] = [];
    const expected = writers * (writesEach + Math.ceil(writesEach / 3));
    const tail = async () => {
      // Once the writers are done, read on until every event came or 10 s passed: another test's
      // transaction open on the same server also holds the feed back for its while.
      let deadline = Number.POSITIVE_INFINITY;
      while (seen.length < expected && Date.now() < deadline) {
        if (!writing && deadline === Number.POSITIVE_INFINITY) deadline = Date.now() + 10_000;
        const page = await read(after);
        seen.push(...page.events.map((event) => event.id));
        after = page.events.at(-1)?.id ?? after;
        if (!page.next) await setTimeout(2);
      }
    };
    const reader = tail();
    await Promise.all(Array.from({ length: writers }, (_, writer) => write(writer)));
    writing = false;
    await reader;
    assert.equal(new Set(seen).size, seen.length, 'no event seen twice');
    assert.deepEqual(seen, [...seen].sort(), 'in feed order: ids sort as their positions');
    assert.equal(seen.length, expected, 'every event seen');
    const stored = await sql<{ n: number }>`
      select count(*)::int as n from events where tenant_id = ${tenant.id} and type like 'lead.%'
        and object->>'name' like 'Writer %'`.execute(ctx.db);
    assert.equal(stored.rows[0]?.n, expected);
  });
});
