import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { type Answer, API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { unique, uniqueEmail } from '../helpers/unique.js';

const email = () => uniqueEmail('b');

/** A valid create body of each resource. */
const BODIES = {
  leads: (extra: Record<string, unknown> = {}) => ({ name: 'Ana Lima', phone: '+55 11 5555-0000', ...extra }),
  customers: (extra: Record<string, unknown> = {}) => ({ name: 'Ana Lima', email: email(), ...extra }),
} as const;

/** SPEC §13: `POST /<resource>/batch`, 1–100 items, each succeeding or failing on its own. */
describeEachBackend('batch writes (SPEC §13)', (ctx) => {
  let tenant: TestTenant;

  before(async () => {
    tenant = await ctx.tenant('Batches');
  });

  const count = async (resource: 'leads' | 'customers') =>
    Number(
      (
        await ctx.db
          .selectFrom(resource)
          .select(ctx.db.fn.countAll().as('n'))
          .where('tenantId', '=', tenant.id)
          .executeTakeFirst()
      )?.n,
    );
  const batch = (resource: string, body: unknown, options: { query?: Record<string, string>; token?: string } = {}) =>
    ctx.request('POST', `${API}/${resource}/batch`, { token: options.token ?? tenant.token, body, ...options });

  for (const resource of ['leads', 'customers'] as const) {
    it(`${resource}: creates every good item, answers each bad one with its SPEC §2 error, in input order`, async () => {
      const before = await count(resource);
      const externalId = unique('dup');
      const items = [
        BODIES[resource]({ name: 'First', externalId }),
        BODIES[resource]({ name: '' }),
        BODIES[resource]({ name: 'Third', score: 'high', value: 'high' }),
        BODIES[resource]({ name: 'Clash', externalId }),
        'not an object',
        BODIES[resource]({ name: 'Last', notes: 'x\u0000y' }),
        BODIES[resource]({ name: 'Really last' }),
      ];
      const res = await batch(resource, { items });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const results: Answer['body'][] = res.body.results;
      assert.deepEqual(
        results.map((r) => [r.index, r.status]),
        [
          [0, 201],
          [1, 400],
          [2, 400],
          [3, 409],
          [4, 400],
          [5, 400],
          [6, 201],
        ],
      );
      assert.equal(results[0]?.data.name, 'First');
      assert.equal(results[1]?.error.code, 'validation_failed');
      assert.equal(results[1]?.error.details[0].field, 'name');
      assert.equal(results[1]?.error.success, false);
      assert.ok(results[2]?.error.details[0].field === 'score' || results[2]?.error.details[0].field === 'value');
      assert.equal(results[3]?.error.code, 'conflict');
      assert.equal(results[3]?.error.existingId, results[0]?.data._id, 'the clash names the earlier item');
      assert.equal(results[4]?.error.details[0].field, 'body');
      assert.equal(results[5]?.error.details[0].field, 'body', 'a NUL the database refuses');
      assert.equal(await count(resource), before + 2, 'failed items leave no trace');
      const read = await ctx.request('GET', `${API}/${resource}/${results[6]?.data._id}`, { token: tenant.token });
      assert.deepEqual(read.body, results[6]?.data);
    });

    it(`${resource}: items of every field and kind of text are stored as a single create stores them`, async () => {
      const fields = {
        leads: {
          email: email(),
          source: 'site',
          status: 'contacted',
          score: 87,
          lastContact: '2026-11-20T12:30:00.123-03:00',
        },
        customers: {
          firstName: 'Ana',
          lastName: 'Lima',
          phone: '+55 11 5555-0000',
          status: 'inactive',
          type: 'company',
          value: 1234.56,
          autoPayment: true,
        },
      }[resource];
      const texts = ['Zoë Ñandú', 'emoji 😀', 'quote " back\\slash \t tab', "x'); drop table leads; --"];
      const bodies = texts.map((name, i) =>
        BODIES[resource]({ ...fields, name, notes: `${name}\n${i}`, externalId: unique('all'), email: email() }),
      );
      const res = await batch(resource, { items: bodies });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const results: Answer['body'][] = res.body.results;
      assert.deepEqual(
        results.map((r) => r.status),
        texts.map(() => 201),
      );
      // One statement wrote them all (one transaction id), not the item-by-item path a refused one falls back to.
      const ids = results.map((r) => r.data._id as string);
      const writers = await sql<{ n: number }>`select count(distinct xmin::text)::int as n from ${sql.table(resource)}
        where id = any(${ids}::uuid[])`.execute(ctx.db);
      assert.equal(writers.rows[0]?.n, 1);
      const own = ({ _id, id, createdAt, updatedAt, externalId, email, ...rest }: Record<string, unknown>) => rest;
      for (const [i, result] of results.entries()) {
        const read = await ctx.request('GET', `${API}/${resource}/${result.data._id}`, { token: tenant.token });
        assert.deepEqual(read.body, result.data);
        const single = await ctx.request('POST', `${API}/${resource}`, {
          token: tenant.token,
          body: { ...bodies[i], externalId: unique('single'), email: email() },
        });
        assert.equal(single.status, 201);
        assert.deepEqual(own(result.data), own(single.body), texts[i]);
      }
    });

    it(`${resource}: with upsert, a later item sees an earlier one: two items with one key give one record`, async () => {
      const externalId = unique('same');
      const res = await batch(
        resource,
        {
          items: [
            BODIES[resource]({ name: 'Before', externalId, notes: 'kept' }),
            BODIES[resource]({ name: 'After', externalId }),
            BODIES[resource]({ name: 'No key' }),
          ],
        },
        { query: { upsert: 'externalId' } },
      );
      assert.equal(res.status, 200);
      const [first, second, third] = res.body.results;
      assert.equal(first.status, 201);
      assert.equal(second.status, 200);
      assert.equal(second.data._id, first.data._id);
      assert.equal(second.data.name, 'After');
      assert.equal(second.data.notes, 'kept');
      assert.equal(third.status, 400);
      assert.equal(third.error.details[0].field, 'externalId');
    });

    it(`${resource}: a malformed batch is one 400, and writes nothing`, async () => {
      const before = await count(resource);
      const hundredAndOne = Array.from({ length: 101 }, () => BODIES[resource]());
      for (const body of [
        [BODIES[resource]()],
        {},
        { items: {} },
        { items: [] },
        { items: hundredAndOne },
        { items: [BODIES[resource]()], more: 1 },
      ]) {
        const res = await batch(resource, body);
        assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
        assert.equal(res.body.code, 'validation_failed');
      }
      const res = await ctx.request('POST', `${API}/${resource}/batch`, {
        token: tenant.token,
        body: '{"items": [',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400);
      assert.equal(await count(resource), before);
    });

    it(`${resource}: 100 items are one batch; an upsert key naming something else is a 400`, async () => {
      const items = Array.from({ length: 100 }, (_, i) => BODIES[resource]({ name: `Item ${i}` }));
      const res = await batch(resource, { items });
      assert.equal(res.status, 200);
      assert.equal(res.body.results.length, 100);
      assert.ok(res.body.results.every((r: { status: number }) => r.status === 201));
      assert.deepEqual(
        res.body.results.map((r: { data: { name: string } }) => r.data.name),
        items.map((item) => item.name),
        'each result is its own item’s record',
      );
      assert.deepEqual(
        res.body.results.map((r: { index: number }) => r.index),
        items.map((_, i) => i),
      );
      const wrong = await batch(resource, { items: [BODIES[resource]()] }, { query: { upsert: 'name' } });
      assert.equal(wrong.status, 400);
    });

    it(`${resource}: hostile items (prototype keys, deep nesting) are refused without a trace`, async () => {
      const before = await count(resource);
      for (const text of [
        `{"items": [{"name": "P", "__proto__": {"admin": true}}]}`,
        `{"items": [{"name": "P", "constructor": {"prototype": {"admin": true}}}]}`,
      ]) {
        const res = await ctx.request('POST', `${API}/${resource}/batch`, {
          token: tenant.token,
          body: text,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(res.status, 400, text);
      }
      // Nested 10,000 deep: the body is text, as a hostile client would send it. Past 64 levels the
      // whole body is refused before any item is read.
      const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
      const item = JSON.stringify(BODIES[resource]()).replace(/}$/, `, "notes": ${deep}}`);
      const post = (body: string) =>
        ctx.request('POST', `${API}/${resource}/batch`, {
          token: tenant.token,
          body,
          headers: { 'content-type': 'application/json' },
        });
      const refused = await post(`{"items": [${JSON.stringify(BODIES[resource]())}, ${item}]}`);
      assert.equal(refused.status, 400);
      assert.equal(refused.body.code, 'validation_failed');
      const shallow = JSON.stringify(BODIES[resource]()).replace(/}$/, ', "notes": [[[1]]]}');
      const res = await post(`{"items": [${shallow}, {"nested": {"a": {"b": [1, {"c": null}]}}}]}`);
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.results.map((r: { status: number }) => r.status),
        [400, 400],
      );
      assert.equal(({} as Record<string, unknown>).admin, undefined);
      assert.equal(await count(resource), before);
    });

    it(`${resource}: a body of 1 MiB + 1 byte is a 413`, async () => {
      const text = JSON.stringify({ items: [BODIES[resource]({ notes: '' })] });
      const padded = `${text.slice(0, -1)}${' '.repeat(1024 * 1024 + 1 - text.length)}}`;
      assert.equal(Buffer.byteLength(padded), 1024 * 1024 + 1);
      const res = await ctx.request('POST', `${API}/${resource}/batch`, {
        token: tenant.token,
        body: padded,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 413);
    });

    it(`${resource}: an Idempotency-Key covers the whole batch`, async () => {
      const before = await count(resource);
      const headers = { 'idempotency-key': unique('batch') };
      const body = { items: [BODIES[resource](), BODIES[resource]()] };
      const first = await ctx.request('POST', `${API}/${resource}/batch`, { token: tenant.token, body, headers });
      const replay = await ctx.request('POST', `${API}/${resource}/batch`, { token: tenant.token, body, headers });
      assert.equal(first.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, first.body);
      assert.equal(await count(resource), before + 2);
    });

    it(`${resource}: needs the write scope`, async () => {
      const reader = (await ctx.token(tenant.id, [`${resource}:read`])).token;
      const res = await batch(resource, { items: [BODIES[resource]()] }, { token: reader });
      assert.equal(res.status, 403);
    });
  }

  it('leads: the missing contact rule and the status list apply to each item', async () => {
    const res = await batch('leads', {
      items: [
        { name: 'No contact' },
        { name: 'Odd status', phone: '1', status: 'nope' },
        { name: 'Fine', email: 'F@X.io' },
      ],
    });
    const [noContact, oddStatus, fine] = res.body.results;
    assert.equal(noContact.status, 400);
    assert.deepEqual(
      noContact.error.details.map((d: { field: string }) => d.field),
      ['email', 'phone'],
    );
    assert.equal(oddStatus.status, 400);
    assert.equal(oddStatus.error.details[0].field, 'status');
    assert.equal(fine.data.email, 'f@x.io');
  });

  it('a failure that is not an item’s own (the database cancels a statement) fails the whole batch: nothing written', async () => {
    await sql`
      create function funil_test_cancel() returns trigger language plpgsql as $$
      begin raise exception 'cancelled' using errcode = '57014'; end $$`.execute(ctx.db);
    await sql`
      create trigger funil_test_cancel before insert on leads
      for each row when (new.name = 'Cancelled') execute function funil_test_cancel()`.execute(ctx.db);
    try {
      const before = await count('leads');
      const res = await batch('leads', {
        items: [BODIES.leads(), BODIES.leads({ name: 'Cancelled' }), BODIES.leads()],
      });
      assert.equal(res.status, 503, JSON.stringify(res.body));
      assert.equal(await count('leads'), before);
      // Item by item (a clash sends the batch off the one-statement path): the earlier items go too.
      const externalId = unique('twice');
      const slow = await batch('leads', {
        items: [BODIES.leads({ externalId }), BODIES.leads({ externalId }), BODIES.leads({ name: 'Cancelled' })],
      });
      assert.equal(slow.status, 503, JSON.stringify(slow.body));
      assert.equal(await count('leads'), before);
    } finally {
      await sql`drop trigger funil_test_cancel on leads`.execute(ctx.db);
      await sql`drop function funil_test_cancel`.execute(ctx.db);
    }
  });

  it('two batches taking the same keys in opposite orders both finish (a deadlock is run again)', async () => {
    if (ctx.backend !== 'postgres') return;
    for (let round = 0; round < 2; round++) {
      const items = Array.from({ length: 30 }, (_, i) => ({ name: `Racer ${i}`, email: email() }));
      const upserts = { query: { upsert: 'email' } };
      const [one, two] = await Promise.all([
        batch('customers', { items }, upserts),
        batch('customers', { items: [...items].reverse() }, upserts),
      ]);
      assert.equal(one.status, 200, JSON.stringify(one.body).slice(0, 300));
      assert.equal(two.status, 200, JSON.stringify(two.body).slice(0, 300));
      const statuses = [...one.body.results, ...two.body.results].map((r: { status: number }) => r.status);
      assert.equal(statuses.filter((status) => status === 201).length, 30, 'each e-mail created once');
      assert.equal(statuses.filter((status) => status === 200).length, 30, 'and updated by the other batch');
    }
  });

  it('counts as one request for the rate limit', async () => {
    const remaining = async (res: { headers: Record<string, unknown> }) => Number(res.headers['ratelimit-remaining']);
    const first = await batch('leads', { items: Array.from({ length: 50 }, () => BODIES.leads()) });
    const second = await batch('leads', { items: [BODIES.leads()] });
    assert.equal((await remaining(first)) - (await remaining(second)), 1);
  });

  it('answers item errors in the caller’s language', async () => {
    const res = await ctx.request('POST', `${API}/leads/batch`, {
      token: tenant.token,
      body: { items: [{ name: '', phone: '1' }] },
      headers: { 'accept-language': 'en' },
    });
    assert.match(res.body.results[0].error.error, /name/i);
    assert.doesNotMatch(res.body.results[0].error.error, /obrigatório|vazio/);
  });
});
