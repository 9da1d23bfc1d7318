import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { sql } from 'kysely';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { unique, uniqueEmail } from '../helpers/unique.js';

const email = () => uniqueEmail('u');

/** SPEC §13: `POST …?upsert=email|externalId` updates the record with that key, or creates it. */
describeEachBackend('upsert on POST /leads and /customers (SPEC §13)', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;

  before(async () => {
    tenant = await ctx.tenant('Upserts');
    other = await ctx.tenant('Another tenant');
  });

  const upsert = (resource: string, key: string, body: unknown, token = tenant.token, headers = {}) =>
    ctx.request('POST', `${API}/${resource}`, { token, body, query: { upsert: key }, headers });

  for (const resource of ['leads', 'customers'] as const) {
    for (const key of ['email', 'externalId'] as const) {
      const keyed = () => (key === 'email' ? { email: email() } : { externalId: unique('crm'), email: email() });

      it(`${resource} by ${key}: creates (201), then updates the same record (200), keeping absent fields`, async () => {
        const keys = keyed();
        const first = await upsert(resource, key, { name: 'Ana Lima', phone: '111', notes: 'first', ...keys });
        assert.equal(first.status, 201, JSON.stringify(first.body));
        assert.equal(first.headers['funil-upsert'], 'created');
        assert.ok(first.headers.etag);
        const second = await upsert(resource, key, { name: 'Ana Lima Souza', notes: null, ...keys });
        assert.equal(second.status, 200, JSON.stringify(second.body));
        assert.equal(second.headers['funil-upsert'], 'updated');
        assert.equal(second.body._id, first.body._id);
        assert.equal(second.body.name, 'Ana Lima Souza');
        assert.equal(second.body.phone, '111', 'an absent field keeps its value');
        assert.equal(second.body.notes, null, 'null clears');
        assert.notEqual(second.headers.etag, first.headers.etag);
        const read = await ctx.request('GET', `${API}/${resource}/${first.body._id}`, { token: tenant.token });
        assert.deepEqual(read.body, second.body);
        assert.equal(read.headers.etag, second.headers.etag);
      });

      it(`${resource} by ${key}: a body without the key is a 400 naming it, and writes nothing`, async () => {
        const before = await ctx.db.selectFrom(resource).select(ctx.db.fn.countAll().as('n')).executeTakeFirst();
        const body =
          key === 'email'
            ? { name: 'No key', phone: '1', externalId: unique('x') }
            : { name: 'No key', email: email() };
        for (const sent of [body, { ...body, [key]: '' }, { ...body, [key]: '   ' }, { ...body, [key]: null }]) {
          const res = await upsert(resource, key, sent);
          assert.equal(res.status, 400, JSON.stringify(sent));
          assert.equal(res.body.code, 'validation_failed');
          assert.equal(res.body.details?.[0]?.field, key, JSON.stringify(res.body));
        }
        const after = await ctx.db.selectFrom(resource).select(ctx.db.fn.countAll().as('n')).executeTakeFirst();
        assert.equal(Number(after?.n), Number(before?.n));
      });

      it(`${resource} by ${key}: matches only within the caller's tenant`, async () => {
        const keys = keyed();
        const mine = await upsert(resource, key, { name: 'Mine', phone: '1', ...keys });
        const theirs = await upsert(resource, key, { name: 'Theirs', phone: '2', ...keys }, other.token);
        assert.equal(theirs.status, 201);
        assert.notEqual(theirs.body._id, mine.body._id);
        const again = await upsert(resource, key, { name: 'Mine again', ...keys });
        assert.equal(again.status, 200);
        assert.equal(again.body._id, mine.body._id);
        const unchanged = await ctx.request('GET', `${API}/${resource}/${theirs.body._id}`, { token: other.token });
        assert.equal(unchanged.body.name, 'Theirs');
      });

      it(`${resource} by ${key}: 25 concurrent upserts of one new key make exactly one record`, async () => {
        const keys = keyed();
        const answers = await Promise.all(
          Array.from({ length: 25 }, (_, i) => upsert(resource, key, { name: `Racer ${i}`, phone: '1', ...keys })),
        );
        const statuses = answers.map((a) => a.status).sort();
        assert.deepEqual(statuses, [200, ...Array(23).fill(200), 201].sort(), JSON.stringify(statuses));
        const ids = new Set(answers.map((a) => a.body._id));
        assert.equal(ids.size, 1);
        const rows = await ctx.db
          .selectFrom(resource)
          .select('id')
          .where('tenantId', '=', tenant.id)
          .where(key, '=', (keys as Record<string, string>)[key] as string)
          .execute();
        assert.equal(rows.length, 1);
      });
    }

    it(`${resource}: an unknown upsert key is a 400 naming the parameter`, async () => {
      const res = await upsert(resource, 'name', { name: 'Ana', email: email() });
      assert.equal(res.status, 400);
      assert.equal(res.body.details?.[0]?.field, 'upsert');
    });

    it(`${resource}: an Idempotency-Key replays the upsert's answer and its Funil-Upsert`, async () => {
      const keys = { externalId: unique('idem'), email: email() };
      const headers = { 'idempotency-key': unique('key') };
      const first = await upsert(resource, 'externalId', { name: 'Once', ...keys }, tenant.token, headers);
      assert.equal(first.status, 201);
      const replay = await upsert(resource, 'externalId', { name: 'Once', ...keys }, tenant.token, headers);
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.headers['funil-upsert'], 'created');
      assert.equal(replay.headers.etag, first.headers.etag);
      assert.deepEqual(replay.body, first.body);
    });

    it(`${resource}: the update of an upsert keeps the other unique fields' rule (409 with existingId)`, async () => {
      const holder = await upsert(resource, 'externalId', { name: 'Holder', email: email(), externalId: unique('h') });
      const keys = { email: email() };
      await upsert(resource, 'email', { name: 'Mover', phone: '1', ...keys });
      const res = await upsert(resource, 'email', { name: 'Mover', ...keys, externalId: holder.body.externalId });
      assert.equal(res.status, 409, JSON.stringify(res.body));
      assert.equal(res.body.existingId, holder.body._id);
    });
  }

  it('the body must be a valid create body also when it updates: a lead without e-mail or phone is a 400', async () => {
    const externalId = unique('rule');
    await upsert('leads', 'externalId', { name: 'Has phone', phone: '1', externalId });
    const res = await upsert('leads', 'externalId', { name: 'No contact', externalId });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.details.map((d: { field: string }) => d.field),
      ['email', 'phone'],
    );
    const res2 = await upsert('customers', 'email', { name: 'Bad value', email: email(), value: 1.234 });
    assert.equal(res2.status, 400);
  });

  it('stamps a create with the time of its statement, not of its transaction', async () => {
    const customers = ctx.services().customers;
    const stamps = await ctx.db.transaction().execute(async (trx) => {
      const began = (await sql<{ t: Date }>`select now() as t`.execute(trx)).rows[0]?.t as Date;
      await sql`select pg_sleep(0.05)`.execute(trx);
      const actor = { tenantId: tenant.id, tokenId: tenant.tokenId };
      const created = await customers.create(trx, actor, { name: 'Later', email: email() });
      return { began, createdAt: created.object.createdAt, updatedAt: created.object.updatedAt };
    });
    assert.ok(Date.parse(stamps.createdAt) - stamps.began.getTime() >= 40, JSON.stringify(stamps));
    assert.equal(stamps.updatedAt, stamps.createdAt);
  });

  it('leads by e-mail: updates the most recently created lead with that e-mail', async () => {
    const shared = email();
    const older = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: { name: 'Older', email: shared },
    });
    const newer = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: { name: 'Newer', email: shared },
    });
    const res = await upsert('leads', 'email', { name: 'Updated', email: shared.toUpperCase(), score: 70 });
    assert.equal(res.status, 200);
    assert.equal(res.body._id, newer.body._id);
    assert.equal(res.body.score, 70);
    const untouched = await ctx.request('GET', `${API}/leads/${older.body._id}`, { token: tenant.token });
    assert.equal(untouched.body.name, 'Older');
  });

  it('customers by externalId: a concurrent plain create of the key is found and updated, not a 409', async () => {
    // Plain creates do not take the upsert's lock: the upsert's insert may meet their row.
    const externalId = unique('mixed');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2
          ? ctx.request('POST', `${API}/customers`, {
              token: tenant.token,
              body: { name: `Plain ${i}`, email: email(), externalId },
            })
          : upsert('customers', 'externalId', { name: `Upsert ${i}`, email: email(), externalId }),
      ),
    );
    const upserts = answers.filter((_, i) => i % 2 === 0);
    for (const answer of upserts) assert.ok([200, 201].includes(answer.status), JSON.stringify(answer.body));
    const plain = answers.filter((_, i) => i % 2 === 1);
    for (const answer of plain) assert.ok([201, 409].includes(answer.status), JSON.stringify(answer.body));
    const rows = await ctx.db.selectFrom('customers').select('id').where('externalId', '=', externalId).execute();
    assert.equal(rows.length, 1);
  });

  it('customers by externalId: a plain create that commits while the upsert inserts is found and updated', async () => {
    // Only PostgreSQL runs two transactions at once; PGlite's one connection serialises them.
    if (ctx.backend !== 'postgres') return;
    const externalId = unique('held');
    const customers = ctx.services().customers;
    let commit!: () => void;
    const held = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let plainId = '';
    const plain = ctx.db.transaction().execute(async (trx) => {
      const stored = await customers.create(
        trx,
        { tenantId: tenant.id, tokenId: tenant.tokenId },
        {
          name: 'Plain',
          email: email(),
          externalId,
        },
      );
      plainId = stored.object._id;
      await held;
    });
    while (!plainId) await setTimeout(5);
    const answer = upsert('customers', 'externalId', { name: 'Upserted', email: email(), externalId });
    // The upsert found nothing (the row is not committed) and now waits on the unique index.
    while (!(await waitingOnLock())) await setTimeout(5);
    commit();
    await plain;
    const res = await answer;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body._id, plainId);
    assert.equal(res.body.name, 'Upserted');
  });

  const waitingOnLock = async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(ctx.db);
    return (rows[0]?.n ?? 0) > 0;
  };
});
