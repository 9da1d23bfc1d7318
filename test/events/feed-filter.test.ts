import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { sql } from 'kysely';
import { assertError, assertForbidden, assertInvalidField } from '../helpers/assert-error.js';
import { define, fieldBody } from '../helpers/custom-fields.js';
import { feedSettled } from '../helpers/feed.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { uniqueEmail } from '../helpers/unique.js';

interface FeedEvent {
  id: string;
  type: string;
  actor: { tokenId: string | null };
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever object the event holds.
  data: { object: Record<string, any>; changedFields: string[] };
}

/** SPEC §22: `GET /events?filter=` — only the events a filter lets through, paged exactly. */
describeEachBackend('the change feed through a filter (SPEC §22)', (ctx) => {
  const send = async (tenant: TestTenant, method: string, path: string, body?: unknown, token = tenant.token) => {
    const res = await ctx.request(method, `${API}${path}`, { token, body });
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  /** One page of the feed through `filter`. */
  const page = async (
    tenant: TestTenant,
    filter: unknown,
    query: Record<string, string> = {},
    token = tenant.token,
  ): Promise<{ events: FeedEvent[]; next?: string }> => {
    await feedSettled(ctx.db, tenant.id);
    const res = await ctx.request('GET', `${API}/events`, {
      token,
      query: { limit: '1000', ...query, filter: JSON.stringify(filter) },
    });
    assert.equal(res.status, 200, res.text);
    return { events: res.body, next: res.headers['x-next-cursor'] as string | undefined };
  };
  const feed = async (tenant: TestTenant, filter: unknown, token = tenant.token) =>
    (await page(tenant, filter, {}, token)).events;
  const names = (events: FeedEvent[]) => events.map((event) => `${event.type} ${event.data.object.name}`);

  it('lets through only the events whose object after the change passes `where`', async () => {
    const tenant = await ctx.tenant();
    const low = await send(tenant, 'POST', '/leads', { name: 'Low', phone: '1', score: 10 });
    await send(tenant, 'POST', '/leads', { name: 'High', phone: '2', score: 80, status: 'won' });
    await send(tenant, 'PUT', `/leads/${low._id}`, { score: 90 });
    await send(tenant, 'POST', '/customers', { name: 'Cia', email: uniqueEmail('cia') });
    assert.deepEqual(names(await feed(tenant, { where: { score: { gte: 50 } } })), [
      'lead.created High',
      'lead.updated Low',
    ]);
    assert.deepEqual(
      names(await feed(tenant, { where: { any: [{ status: { eq: 'won' } }, { name: { in: ['Cia'] } }] } })),
      ['lead.created High', 'customer.created Cia'],
    );
    assert.deepEqual(names(await feed(tenant, { types: ['lead.created'], where: { not: { score: { lte: 50 } } } })), [
      'lead.created High',
    ]);
    assert.deepEqual(
      names(await feed(tenant, { where: { all: [{ email: { exists: true } }, { status: { neq: 'inactive' } }] } })),
      ['customer.created Cia'],
    );
    // An empty filter is no filter.
    assert.equal((await feed(tenant, {})).length, 4);
  });

  it('changedFields lets through updates, status changes and custom changes of the fields named, and creations', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('tier', { type: 'select', options: ['gold', 'silver'] }));
    await define(ctx, tenant, fieldBody('note'));
    const lead = await send(tenant, 'POST', '/leads', { name: 'Ana', phone: '1' });
    await send(tenant, 'PUT', `/leads/${lead._id}`, { name: 'Ana Lima' });
    await send(tenant, 'PUT', `/leads/${lead._id}/status`, { status: 'contacted' });
    await send(tenant, 'PUT', `/leads/${lead._id}`, { custom: { tier: 'gold' } });
    await send(tenant, 'PUT', `/leads/${lead._id}`, { custom: { note: 'hello' } });
    await send(tenant, 'PUT', `/leads/${lead._id}`, { score: 5, custom: { tier: 'silver' } });
    const events = await feed(tenant, { changedFields: ['status', 'custom.tier'] });
    assert.deepEqual(
      events.map((event) => [event.type, event.data.changedFields]),
      [
        ['lead.created', []],
        ['lead.status_changed', ['status']],
        ['lead.updated', ['custom.tier']],
        ['lead.updated', ['score', 'custom.tier']],
      ],
    );
    const updatesOnly = await feed(tenant, { types: ['lead.updated'], changedFields: ['name'] });
    assert.deepEqual(
      updatesOnly.map((event) => event.data.changedFields),
      [['name']],
    );
  });

  it('excludeActors drops what "self" (the reading token) or the tokens named wrote', async () => {
    const tenant = await ctx.tenant();
    const sync = await ctx.token(tenant.id, ['leads:read', 'leads:write']);
    const people = await ctx.token(tenant.id, ['leads:read', 'leads:write']);
    await send(tenant, 'POST', '/leads', { name: 'From sync', phone: '1' }, sync.token);
    await send(tenant, 'POST', '/leads', { name: 'From people', phone: '2' }, people.token);
    await send(tenant, 'POST', '/leads', { name: 'From admin', phone: '3' });
    const self = { excludeActors: ['self'] };
    assert.deepEqual(names(await feed(tenant, self, sync.token)), [
      'lead.created From people',
      'lead.created From admin',
    ]);
    assert.deepEqual(names(await feed(tenant, self, people.token)), [
      'lead.created From sync',
      'lead.created From admin',
    ]);
    assert.deepEqual(names(await feed(tenant, { excludeActors: [people.id, tenant.tokenId] }, sync.token)), [
      'lead.created From sync',
    ]);
    assert.deepEqual(names(await feed(tenant, { excludeActors: ['self', people.id.toUpperCase()] }, sync.token)), [
      'lead.created From admin',
    ]);
  });

  it('refuses a bad filter with a 400 naming the path of its faulty part', async () => {
    const tenant = await ctx.tenant();
    const tests = (n: number) => Array.from({ length: n }, (_, i) => ({ score: { gte: i } }));
    const cases: [filter: unknown, path: string][] = [
      ['{not json', 'filter'],
      [[], 'filter'],
      [{ where: { all: [{ status: { eq: 'won' } }, { status: { eq: {} } }] } }, 'filter.where.all.1.status.eq'],
      [{ where: { status: { like: 'w%' } } }, 'filter.where.status.like'],
      [{ where: { status: { eq: 'a', neq: 'b' } } }, 'filter.where.status'],
      [{ where: { status: { eq: 'a' }, score: { gte: 1 } } }, 'filter.where'],
      [{ where: { status: { in: [] } } }, 'filter.where.status.in'],
      [{ where: { status: { eq: null } } }, 'filter.where.status.eq'],
      [{ where: { score: { gte: true } } }, 'filter.where.score.gte'],
      [{ where: { any: [{ not: { all: [{ any: [{ score: { gte: 1 } }] }] } }] } }, 'filter.where.any.0.not.all.0.any'],
      [{ where: { all: tests(21) } }, 'filter.where.all'],
      [{ where: { all: [{ all: tests(11) }, { any: tests(10) }] } }, 'filter.where'],
      [{ where: { scroe: { gte: 1 } } }, 'filter.where.scroe'],
      [{ where: { custom: { exists: true } } }, 'filter.where.custom'],
      [{ where: { 'custom.Tier': { exists: true } } }, 'filter.where.custom.Tier'],
      [{ types: ['lead.created'], where: { autoPayment: { eq: true } } }, 'filter.where.autoPayment'],
      [{ changedFields: ['status', 'sttaus'] }, 'filter.changedFields.1'],
      [{ excludeActors: ['me'] }, 'filter.excludeActors.0'],
      [{ types: ['lead.exploded'] }, 'filter.types.0'],
      [{ where: { status: { eq: 'won' } }, extra: 1 }, 'filter.extra'],
    ];
    for (const [filter, path] of cases) {
      const res = await ctx.request('GET', `${API}/events`, {
        token: tenant.token,
        query: { filter: typeof filter === 'string' ? filter : JSON.stringify(filter) },
      });
      assertInvalidField(res, path);
    }
    const english = await ctx.request('GET', `${API}/events`, {
      token: tenant.token,
      headers: { 'accept-language': 'en' },
      query: { filter: JSON.stringify({ where: { all: [{ all: tests(11) }, { any: tests(10) }] } }) },
    });
    assert.match(assertError(english, 400, 'validation_failed', { details: true }).error, /21 field tests; at most 20/);
  });

  it('reads no family the token cannot: a 403 for its types, before any 400; `where` never sees another family', async () => {
    const tenant = await ctx.tenant();
    const leadsOnly = (await ctx.token(tenant.id, ['leads:read'])).token;
    const bad = { types: ['customer.created'], where: { nope: { eq: {} } } };
    assertForbidden(
      await ctx.request('GET', `${API}/events`, { token: leadsOnly, query: { filter: JSON.stringify(bad) } }),
    );
    assertForbidden(
      await ctx.request('GET', `${API}/events`, {
        token: leadsOnly,
        query: { types: 'customer.created', filter: JSON.stringify({ where: { nope: { eq: 1 } } }) },
      }),
    );
    // A 400 of another query field comes after the 403 too.
    const refused: Record<string, string>[] = [
      { types: 'customer.created', limit: '0' },
      { types: 'lead.created,customer.created', after: 'zzz' },
      { filter: JSON.stringify({ types: ['customer.created'] }), after: 'zzz' },
      { filter: JSON.stringify(bad), limit: 'many', unknown: '1' },
    ];
    for (const query of refused) {
      assertForbidden(await ctx.request('GET', `${API}/events`, { token: leadsOnly, query }));
    }
    assertInvalidField(
      await ctx.request('GET', `${API}/events`, { token: leadsOnly, query: { types: 'lead.created', limit: '0' } }),
      'limit',
    );
    await send(tenant, 'POST', '/customers', { name: 'Hidden', email: uniqueEmail('hidden') });
    await send(tenant, 'POST', '/leads', { name: 'Seen', email: uniqueEmail('seen') });
    // Both objects have an e-mail; the token reads only the leads' family.
    assert.deepEqual(names(await feed(tenant, { where: { email: { exists: true } } }, leadsOnly)), [
      'lead.created Seen',
    ]);
    // A customer's own field is not one of a lead's: the filter names nothing this token can read.
    assertInvalidField(
      await ctx.request('GET', `${API}/events`, {
        token: leadsOnly,
        query: { filter: JSON.stringify({ where: { autoPayment: { eq: true } } }) },
      }),
      'filter.where.autoPayment',
    );
  });

  it('pages exactly through a sparse filter: short pages, and a cursor past what was read when nothing matched', async () => {
    const tenant = await ctx.tenant();
    const first = await send(tenant, 'POST', '/leads', { name: 'Match 1', phone: '1', score: 99 });
    for (let batch = 0; batch < 11; batch++) {
      await send(tenant, 'POST', '/leads/batch', {
        items: Array.from({ length: 100 }, (_, n) => ({ name: `Miss ${batch}.${n}`, phone: '1', score: 1 })),
      });
    }
    await send(tenant, 'PUT', `/leads/${first._id}`, { name: 'Match 2' });
    await send(tenant, 'POST', '/leads', { name: 'Match 3', phone: '1', score: 98 });
    const filter = { where: { score: { gte: 90 } } };
    const pages: { names: string[]; next?: string }[] = [];
    let after: string | undefined;
    do {
      const got = await page(tenant, filter, { limit: '2', ...(after ? { after } : {}) });
      pages.push({ names: names(got.events), ...(got.next ? { next: got.next } : {}) });
      // Without a cursor the page reached the end: the next one would start at its last event.
      after = got.next;
    } while (after);
    assert.deepEqual(
      pages.map((p) => p.names),
      [['lead.created Match 1'], ['lead.updated Match 2', 'lead.created Match 3']],
      'the first page stops short after reading about 1,000 events; the second goes on from there',
    );
    // The cursor of the short page is an event it read but did not show: past what it skipped.
    const all = (await ctx.request('GET', `${API}/events`, { token: tenant.token, query: { limit: '1000' } })).body;
    const position = all.findIndex((event: FeedEvent) => event.id === pages[0]?.next);
    assert.ok(position > 900, `the short page read on to event ${position}`);
    assert.equal(all[position].data.object.score, 1, 'an event the filter left out');
    // A full page whose last event is not the last read says more may follow, from that event.
    const full = await page(tenant, { where: { score: { lte: 1 } } }, { limit: '3' });
    assert.equal(full.events.length, 3);
    assert.equal(full.next, full.events[2]?.id);
  });

  it('a tailing reader with a filter sees every matching event of 16 concurrent writers once, in order', async () => {
    const tenant = await ctx.tenant();
    const writers = 16;
    const writesEach = 8;
    // On PostgreSQL each write waits a random while inside its transaction, so that commits come
    // in another order than their sequence numbers were taken.
    const pause = ctx.backend === 'postgres' ? sql`select pg_sleep(random() * 0.02)` : undefined;
    const { leads } = ctx.services();
    const actor = { tenantId: tenant.id, tokenId: tenant.tokenId };
    const write = async (writer: number) => {
      for (let i = 0; i < writesEach; i++) {
        await ctx.db.transaction().execute(async (trx) => {
          const score = (writer * 13 + i * 7) % 100;
          const lead = await leads.create(trx, actor, { name: `W${writer} #${i}`, phone: '1', score });
          if (i % 3 === 0) await leads.setStatus(trx, actor, lead.object._id, 'contacted');
          if (pause) await pause.execute(trx);
        });
      }
    };
    const filter = {
      types: ['lead.created', 'lead.status_changed'],
      where: { any: [{ status: { eq: 'contacted' } }, { score: { gte: 60 } }] },
    };
    const passes = (event: FeedEvent) =>
      filter.types.includes(event.type) && (event.data.object.status === 'contacted' || event.data.object.score >= 60);
    let writing = true;
    let after: string | undefined;
    const seen: FeedEvent[] = [];
    const tail = async () => {
      let deadline = Number.POSITIVE_INFINITY;
      while (Date.now() < deadline) {
        if (!writing && deadline === Number.POSITIVE_INFINITY) deadline = Date.now() + 3_000;
        const res = await ctx.request('GET', `${API}/events`, {
          token: tenant.token,
          query: { limit: '4', filter: JSON.stringify(filter), ...(after ? { after } : {}) },
        });
        assert.equal(res.status, 200, res.text);
        seen.push(...res.body);
        const next = res.headers['x-next-cursor'] as string | undefined;
        after = next ?? res.body.at(-1)?.id ?? after;
        if (!next) await setTimeout(5);
      }
    };
    const reader = tail();
    await Promise.all(Array.from({ length: writers }, (_, writer) => write(writer)));
    writing = false;
    await reader;
    await feedSettled(ctx.db, tenant.id);
    const everything = (await ctx.request('GET', `${API}/events`, { token: tenant.token, query: { limit: '1000' } }))
      .body as FeedEvent[];
    assert.equal(everything.length, writers * (writesEach + Math.ceil(writesEach / 3)));
    const expected = everything.filter(passes).map((event) => event.id);
    assert.ok(expected.length > 50 && expected.length < everything.length, `${expected.length} match`);
    const ids = seen.map((event) => event.id);
    assert.equal(new Set(ids).size, ids.length, 'no event seen twice');
    assert.deepEqual(ids, expected, 'every matching event, in feed order, and nothing else');
  });
});
