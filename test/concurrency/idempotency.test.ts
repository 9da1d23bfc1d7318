import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { IdempotencyRepository } from '../../src/idempotency/idempotency.repository.js';
import { API, describeEachBackend, TestContext, type TestTenant } from '../helpers/test-app.js';
import { skipUnless } from '../helpers/test-database.js';

describeEachBackend('Idempotency-Key on POST (SPEC §7)', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;
  const post = (path: string, key: string | undefined, body: unknown, token = tenant.token) =>
    ctx.request('POST', `${API}/${path}`, {
      token,
      body,
      headers: key === undefined ? {} : { 'idempotency-key': key },
    });
  const countLeads = async (tenantId: string, name: string) => {
    const row = await ctx.db
      .selectFrom('leads')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenantId', '=', tenantId)
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  before(async () => {
    tenant = await ctx.tenant();
    other = await ctx.tenant('Other');
  });

  it('replays the first answer for the same key and body, and creates nothing more', async () => {
    const body = { name: 'Replayed', email: 'replay@example.com' };
    const first = await post('leads', 'key-replay-1', body);
    assert.equal(first.status, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const second = await post('leads', 'key-replay-1', body);
    assert.equal(second.status, 201);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.body, first.body);
    assert.equal(second.headers.etag, first.headers.etag);
    assert.equal(await countLeads(tenant.id, 'Replayed'), 1);
  });

  it('answers 422 idempotency_key_reused to the same key with another body', async () => {
    await post('leads', 'key-reused', { name: 'Original', phone: '1' });
    const res = await post('leads', 'key-reused', { name: 'Different', phone: '1' });
    assert.equal(res.status, 422);
    assert.equal(res.body.code, 'idempotency_key_reused');
    assert.equal(res.body.success, false);
    assert.equal(await countLeads(tenant.id, 'Different'), 0);
  });

  it('keeps keys per tenant: the same key in another tenant is another request', async () => {
    const body = { name: 'Per tenant', phone: '1' };
    const mine = await post('leads', 'shared-key', body);
    const theirs = await post('leads', 'shared-key', body, other.token);
    assert.equal(theirs.status, 201);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.notEqual(theirs.body._id, mine.body._id);
    assert.equal(theirs.body.tenant, other.id);
  });

  it('keeps keys per token: a web form using a key first does not block an integration of its tenant', async () => {
    const form = await ctx.token(tenant.id, ['leads:write']);
    const fromForm = await post('leads', 'crm-sync-42', { name: 'From the form', phone: '1' }, form.token);
    assert.equal(fromForm.status, 201);
    const fromCrm = await post('customers', 'crm-sync-42', { name: 'From the CRM', email: 'crm-42@example.com' });
    assert.equal(fromCrm.status, 201);
    assert.equal(fromCrm.headers['idempotent-replayed'], undefined);
    const anotherForm = await ctx.token(tenant.id, ['leads:write']);
    const sameBodyOtherToken = await post(
      'leads',
      'crm-sync-42',
      { name: 'From the form', phone: '1' },
      anotherForm.token,
    );
    assert.equal(sameBodyOtherToken.status, 201);
    assert.notEqual(sameBodyOtherToken.body._id, fromForm.body._id, 'another token: another request');
  });

  it('compares what a body means, the same for a batch as for a single POST: an e-mail in another case or with spaces replays', async () => {
    const single = await post('leads', 'key-meaning-1', { name: 'Ana', email: 'Ana@Example.com' });
    assert.equal(single.status, 201);
    const singleAgain = await post('leads', 'key-meaning-1', { name: ' Ana ', email: 'ana@example.com ' });
    assert.equal(singleAgain.status, 201);
    assert.equal(singleAgain.headers['idempotent-replayed'], 'true');
    const batch = await post('leads/batch', 'key-meaning-2', { items: [{ name: 'Bia', email: 'Bia@Example.com' }] });
    assert.equal(batch.status, 200);
    const batchAgain = await post('leads/batch', 'key-meaning-2', {
      items: [{ name: ' Bia', email: 'bia@example.com ' }],
    });
    assert.equal(batchAgain.status, 200, JSON.stringify(batchAgain.body));
    assert.equal(batchAgain.headers['idempotent-replayed'], 'true');
    assert.equal(await countLeads(tenant.id, 'Bia'), 1);
    // A different meaning is still another request.
    const other = await post('leads/batch', 'key-meaning-2', { items: [{ name: 'Bia', email: 'bia2@example.com' }] });
    assert.equal(other.status, 422);
  });

  it('answers 422 to the same key and body on another route', async () => {
    const body = { name: 'Route bound', email: 'route-bound@example.com' };
    assert.equal((await post('leads', 'route-key', body)).status, 201);
    const elsewhere = await post('customers', 'route-key', body);
    assert.equal(elsewhere.status, 422);
    assert.equal(elsewhere.body.code, 'idempotency_key_reused');
    const customers = await ctx.db.selectFrom('customers').select('id').where('email', '=', body.email).execute();
    assert.deepEqual(customers, []);
  });

  it('works on customers too, replaying a 409 conflict as it was', async () => {
    const created = await post('customers', 'cust-1', { name: 'Ana', email: 'ana-idem@example.com' });
    assert.equal(created.status, 201);
    const conflict = await post('customers', 'cust-2', { name: 'Ana 2', email: 'ana-idem@example.com' });
    assert.equal(conflict.status, 409);
    const replay = await post('customers', 'cust-2', { name: 'Ana 2', email: 'ana-idem@example.com' });
    assert.equal(replay.status, 409);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body.existingId, created.body._id);
  });

  it('records nothing for a request refused by validation: the corrected retry runs', async () => {
    const bad = await post('leads', 'key-after-400', { name: 'No contact' });
    assert.equal(bad.status, 400);
    const good = await post('leads', 'key-after-400', { name: 'No contact', phone: '1' });
    assert.equal(good.status, 201);
    assert.equal(good.headers['idempotent-replayed'], undefined);
  });

  it('refuses a key that is empty, too long or not printable with a 400 naming the header', async () => {
    for (const key of ['', 'x'.repeat(256), 'tab\there', 'ünïcode']) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `${API}/leads`,
        headers: {
          authorization: `Bearer ${tenant.token}`,
          'content-type': 'application/json',
          'idempotency-key': Buffer.from(key, 'utf8').toString('latin1'),
        },
        payload: JSON.stringify({ name: 'Bad key', phone: '1' }),
      });
      assert.equal(res.statusCode, 400, JSON.stringify(key));
      assert.equal(res.json().details[0].field, 'Idempotency-Key');
    }
    assert.equal(await countLeads(tenant.id, 'Bad key'), 0);
    const longest = await post('leads', 'k'.repeat(255), { name: 'Longest key', phone: '1' });
    assert.equal(longest.status, 201);
  });

  it('answers 409 while the first request with the key is still running', async () => {
    const body = { name: 'Waits', phone: '1' };
    const first = await post('leads', 'running-key', body);
    assert.equal(first.status, 201);
    // Put the record back in the state it has while the first request runs.
    await ctx.db
      .updateTable('idempotencyKeys')
      .set({ state: 'running', responseStatus: null, responseBody: null, responseHeaders: null })
      .where('key', '=', 'running-key')
      .execute();
    const res = await post('leads', 'running-key', body);
    assert.equal(res.status, 409);
    assert.equal(res.body.code, 'conflict');
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(await countLeads(tenant.id, 'Waits'), 1);
  });

  it('takes over a key whose request died (running for minutes), and forgets keys after 24 hours', async () => {
    const body = { name: 'Taken over', phone: '1' };
    const first = await post('leads', 'abandoned-key', body);
    await ctx.db
      .updateTable('idempotencyKeys')
      .set({
        state: 'running',
        responseStatus: null,
        responseBody: null,
        startedAt: sql<Date>`now() - interval '3 minutes'`,
      })
      .where('key', '=', 'abandoned-key')
      .execute();
    const retried = await post('leads', 'abandoned-key', body);
    assert.equal(retried.status, 201);
    assert.notEqual(retried.body._id, first.body._id);

    const old = await post('leads', 'old-key', { name: 'Old', phone: '1' });
    await ctx.db
      .updateTable('idempotencyKeys')
      .set({ createdAt: sql<Date>`now() - interval '25 hours'` } as never)
      .where('key', '=', 'old-key')
      .execute();
    const again = await post('leads', 'old-key', { name: 'Old', phone: '1' });
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], undefined);
    assert.notEqual(again.body._id, old.body._id);
  });

  it('purges records older than 24 hours', async () => {
    await post('leads', 'purge-me', { name: 'Purge', phone: '1' });
    await ctx.db
      .updateTable('idempotencyKeys')
      .set({ createdAt: sql<Date>`now() - interval '25 hours'` } as never)
      .where('key', '=', 'purge-me')
      .execute();
    const purged = await new IdempotencyRepository(ctx.db).purgeExpired();
    assert.ok(purged >= 1);
    const left = await ctx.db.selectFrom('idempotencyKeys').select('key').where('key', '=', 'purge-me').execute();
    assert.deepEqual(left, []);
  });

  it('creates exactly one lead from 20 parallel POSTs with one key, over a real socket', async () => {
    const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const body = JSON.stringify({ name: 'Parallel once', email: 'parallel@example.com' });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${address}${API}/leads`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${tenant.token}`,
              'content-type': 'application/json',
              'idempotency-key': 'parallel-key',
            },
            body,
          }).then(async (res) => ({
            status: res.status,
            replayed: res.headers.get('idempotent-replayed'),
            body: await res.json(),
          })),
        ),
      );
      const created = answers.filter((a) => a.status === 201 && a.replayed === null);
      assert.equal(created.length, 1, JSON.stringify(answers.map((a) => a.status)));
      for (const answer of answers) {
        assert.ok(answer.status === 201 || answer.status === 409, String(answer.status));
        if (answer.status === 201) assert.equal(answer.body._id, created[0]?.body._id);
      }
      assert.equal(await countLeads(tenant.id, 'Parallel once'), 1);
    } finally {
      await ctx.app.server.close();
    }
  });
});

// A database slow enough for the deadline to answer first, and for the retry to come while the
// write still runs even on CI's busiest minute (a 1 s write once ended first; 3 s would meet the
// statement timeout). PostgreSQL only: PGlite runs a statement on the event loop's own thread, so
// no deadline can fire while one runs.
describe('an Idempotency-Key past the request deadline (SPEC §2, §7) [postgres]', {
  skip: skipUnless('postgres'),
}, () => {
  const ctx = new TestContext('postgres', { FUNIL_REQUEST_TIMEOUT_MS: '300' });
  before(async () => {
    await ctx.start();
    await sql`
      create function funil_test_slow_insert() returns trigger language plpgsql as $$
      begin perform pg_sleep(2); return new; end $$`.execute(ctx.db);
    await sql`
      create trigger funil_test_slow_insert before insert on leads
      for each row when (new.name = 'Slow write') execute function funil_test_slow_insert()`.execute(ctx.db);
  });
  after(() => ctx.stop());

  it('keeps the key running past the 503 until the write ends; the retry then replays it, never writing twice', async () => {
    const tenant = await ctx.tenant();
    const send = () =>
      ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        body: { name: 'Slow write', phone: '1' },
        headers: { 'idempotency-key': 'slow-key' },
      });
    const first = await send();
    assert.equal(first.status, 503, 'the deadline answers before the insert ends');
    const early = await send();
    assert.equal(early.status, 409, 'the first request is still running');
    let replay = early;
    for (let i = 0; i < 100 && replay.status === 409; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      replay = await send();
    }
    assert.equal(replay.status, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.match(String(replay.headers.etag), /^"/);
    const rows = await ctx.db.selectFrom('leads').select('id').where('tenantId', '=', tenant.id).execute();
    assert.deepEqual(
      rows.map((row) => row.id),
      [replay.body._id],
    );
  });
});
