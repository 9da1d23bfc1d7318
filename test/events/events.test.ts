import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { EventRepository } from '../../src/events/event.repository.js';
import { pruneEventsPeriodically, pruneOld } from '../../src/events/event-retention.js';
import { WebhookRepository } from '../../src/webhooks/webhook.repository.js';
import { feedSettled } from '../helpers/feed.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { uniqueEmail } from '../helpers/unique.js';

const email = () => uniqueEmail('events');

/** SPEC §14: every change writes one event, in the same statement; GET /events reads them in commit order. */
describeEachBackend('the change feed (SPEC §14)', (ctx) => {
  let tenant: TestTenant;

  before(async () => {
    tenant = await ctx.tenant('Events');
  });

  const events = async (query: Record<string, string> = {}, token = tenant.token) => {
    await feedSettled(ctx.db, tenant.id);
    const res = await ctx.request('GET', `${API}/events`, { token, query: { limit: '1000', ...query } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Event[];
  };
  const historyOf = (objectId: string) => events({ objectId });
  const send = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    ctx.request(method, `${API}${path}`, { token: tenant.token, body, headers });

  it('a create, an update, a status change and a delete of a lead: one event each, with every field', async () => {
    const created = await send('POST', '/leads', { name: 'Ana Lima', email: email(), score: 10 });
    const id = created.body._id;
    const updated = await send('PUT', `/leads/${id}`, { score: 70, name: 'Ana Souza', notes: 'x' });
    const moved = await send('PUT', `/leads/${id}/status`, { status: 'qualified' });
    const read = await send('GET', `/leads/${id}`);
    const deleted = await send('DELETE', `/leads/${id}`);
    assert.equal(deleted.status, 200);
    const history = await historyOf(id);
    assert.deepEqual(
      history.map((event) => event.type),
      ['lead.created', 'lead.updated', 'lead.status_changed', 'lead.deleted'],
    );
    const [create, update, status, remove] = history as [Event, Event, Event, Event];
    assert.deepEqual(create.data, { object: created.body, changedFields: [], previous: {} });
    assert.deepEqual(create.actor, { tokenId: tenant.tokenId });
    assert.equal(create.requestId, created.headers['x-request-id']);
    assert.equal(create.tenant, tenant.id);
    assert.match(create.occurredAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(update.data.object, updated.body);
    assert.deepEqual(update.data.changedFields, ['name', 'score', 'notes']);
    assert.deepEqual(update.data.previous, { name: 'Ana Lima', score: 10, notes: null });
    assert.equal(update.requestId, updated.headers['x-request-id']);
    assert.deepEqual(status.data.object, moved.body);
    assert.deepEqual(status.data.changedFields, ['status']);
    assert.deepEqual(status.data.previous, { status: 'new' });
    assert.deepEqual(remove.data, { object: read.body, changedFields: [], previous: {} });
    const ids = history.map((event) => event.id);
    assert.deepEqual([...ids].sort(), ids, 'ids sort in feed order');
  });

  it('a status moved with other fields is status_changed, not also updated; a timestamp is shown as the API shows it', async () => {
    const created = await send('POST', '/leads', { name: 'Bia', phone: '1' });
    await send('PUT', `/leads/${created.body._id}`, { status: 'won', lastContact: '2026-11-20T10:00:00.5Z' });
    await send('PUT', `/leads/${created.body._id}`, { lastContact: '2026-11-21T10:00:00Z' });
    const [, both, time] = await historyOf(created.body._id);
    assert.equal(both?.type, 'lead.status_changed');
    assert.deepEqual(both?.data.changedFields, ['status', 'lastContact']);
    assert.deepEqual(time?.data.previous, { lastContact: '2026-11-20T10:00:00.500Z' });
    assert.equal(time?.data.object.lastContact, '2026-11-21T10:00:00.000Z');
  });

  it('an update that changes nothing writes no event and no new version', async () => {
    const created = await send('POST', '/leads', { name: 'Caio', phone: '1', score: 5 });
    const same = await send('PUT', `/leads/${created.body._id}`, { name: 'Caio', score: 5 });
    assert.equal(same.status, 200);
    assert.equal(same.headers.etag, created.headers.etag);
    assert.deepEqual(same.body, created.body);
    const status = await send('PUT', `/leads/${created.body._id}/status`, { status: 'new' }, { 'if-match': '"1"' });
    assert.equal(status.status, 200);
    const stale = await send('PUT', `/leads/${created.body._id}`, { name: 'Caio' }, { 'if-match': '"7"' });
    assert.equal(stale.status, 412, 'a no-op still answers a stale If-Match with 412');
    assert.equal((await historyOf(created.body._id)).length, 1);
  });

  it('a refused write leaves no event: 409, 412, 400', async () => {
    const address = email();
    await send('POST', '/customers', { name: 'Holder', email: address });
    const before = (await events()).length;
    assert.equal((await send('POST', '/customers', { name: 'Clash', email: address })).status, 409);
    const lead = await send('POST', '/leads', { name: 'Dani', phone: '1' });
    assert.equal((await send('PUT', `/leads/${lead.body._id}`, { score: 9 }, { 'if-match': '"9"' })).status, 412);
    assert.equal((await send('PUT', `/leads/${lead.body._id}`, { email: null, phone: null })).status, 400);
    assert.equal((await send('DELETE', `/leads/${lead.body._id}`, undefined, { 'if-match': '"9"' })).status, 412);
    assert.equal((await events()).length, before + 1, 'only the lead’s create');
  });

  it('customers: created, updated (a name from its parts), status_changed, deleted', async () => {
    const created = await send('POST', '/customers', { name: 'Eva Maria Reis', email: email() });
    const id = created.body._id;
    await send('PUT', `/customers/${id}`, { lastName: 'Costa' });
    await send('PUT', `/customers/${id}/status`, { status: 'blocked' });
    await send('DELETE', `/customers/${id}`);
    const history = await historyOf(id);
    assert.deepEqual(
      history.map((event) => event.type),
      ['customer.created', 'customer.updated', 'customer.status_changed', 'customer.deleted'],
    );
    assert.deepEqual(history[1]?.data.changedFields, ['lastName', 'name']);
    assert.deepEqual(history[1]?.data.previous, { lastName: 'Maria Reis', name: 'Eva Maria Reis' });
    assert.equal(history[1]?.data.object.name, 'Eva Costa');
    assert.equal(history[0]?.data.object.id, id);
  });

  it('upserts, batch items and conversions write their events; a failed batch item writes none', async () => {
    const address = email();
    const first = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      query: { upsert: 'email' },
      body: { name: 'Fabi', email: address },
    });
    await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      query: { upsert: 'email' },
      body: { name: 'Fabi Lima', email: address },
    });
    const converted = await send('POST', `/leads/${first.body._id}/convert`, { type: 'company' });
    assert.equal(converted.status, 201);
    const history = await historyOf(first.body._id);
    assert.deepEqual(
      history.map((event) => event.type),
      ['lead.created', 'lead.updated', 'lead.converted'],
    );
    assert.deepEqual(history[2]?.data.changedFields, ['status', 'customerId']);
    assert.deepEqual(await historyOf(converted.body.customer._id).then((h) => h.map((e) => e.type)), [
      'customer.created',
    ]);

    const before = (await events()).length;
    const batch = await send('POST', '/customers/batch', {
      items: [
        { name: 'One', email: email() },
        { name: 'Clash', email: address },
        { name: 'Two', email: email() },
      ],
    });
    assert.deepEqual(
      batch.body.results.map((r: { status: number }) => r.status),
      [201, 409, 201],
    );
    const after = await events();
    assert.equal(after.length, before + 2);
    assert.deepEqual(
      after.slice(-2).map((event) => event.data.object._id),
      [batch.body.results[0].data._id, batch.body.results[2].data._id],
    );
    const fast = await send('POST', '/leads/batch', {
      items: [
        { name: 'A', phone: '1' },
        { name: 'B', phone: '2' },
      ],
    });
    const latest = (await events()).slice(-2);
    assert.deepEqual(
      latest.map((event) => [event.type, event.data.object._id, event.requestId]),
      fast.body.results.map((r: { data: { _id: string } }) => [
        'lead.created',
        r.data._id,
        fast.headers['x-request-id'],
      ]),
    );
  });

  it('pages with limit, X-Next-Cursor and Link; after resumes exactly after an event', async () => {
    const all = await events();
    assert.ok(all.length > 5);
    const res = await ctx.request('GET', `${API}/events`, { token: tenant.token, query: { limit: '2' } });
    assert.equal(res.body.length, 2);
    assert.equal(res.headers['x-next-cursor'], res.body[1].id);
    assert.match(String(res.headers.link), new RegExp(`after=${res.body[1].id}.*rel="next"|rel="next"`));
    const walked: Event[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await ctx.request('GET', `${API}/events`, {
        token: tenant.token,
        query: { limit: '3', ...(after ? { after } : {}) },
      });
      walked.push(...page.body);
      after = page.headers['x-next-cursor'] as string | undefined;
      if (!after) break;
    }
    assert.deepEqual(
      walked.map((event) => event.id),
      all.map((event) => event.id),
    );
  });

  it('filters by types; refuses unknown parameters, types and malformed cursors', async () => {
    const statusOnly = await events({ types: 'lead.status_changed,customer.status_changed' });
    assert.ok(statusOnly.length > 0);
    assert.ok(statusOnly.every((event) => event.type.endsWith('.status_changed')));
    const malformed: Record<string, string>[] = [
      { types: 'lead.exploded' },
      { after: 'nope' },
      // Its sequence number past a bigint's range: a 400, not the database's out-of-range error.
      { after: '0000000000000000ffffffffffffffff' },
      { after: 'f'.repeat(32) },
      { objectId: '42' },
      { limit: '0' },
      { sort: 'x' },
    ];
    for (const query of malformed) {
      const res = await ctx.request('GET', `${API}/events`, { token: tenant.token, query });
      assert.equal(res.status, 400, JSON.stringify(query));
      assert.equal(res.body.code, 'validation_failed');
    }
  });

  it('shows a token only the families its scopes allow, and only its tenant', async () => {
    const leadsOnly = (await ctx.token(tenant.id, ['leads:read'])).token;
    const seen = await events({}, leadsOnly);
    assert.ok(seen.length > 0 && seen.every((event) => event.type.startsWith('lead.')));
    const denied = await ctx.request('GET', `${API}/events`, {
      token: leadsOnly,
      query: { types: 'customer.created' },
    });
    assert.equal(denied.status, 403);
    const writer = (await ctx.token(tenant.id, ['leads:write', 'customers:write'])).token;
    assert.equal((await ctx.request('GET', `${API}/events`, { token: writer })).status, 403);
    const other = await ctx.tenant('Other');
    assert.deepEqual(await events({}, other.token), []);
    const mine = await events();
    assert.deepEqual(await events({ objectId: mine[0]?.data.object._id as string }, other.token), []);
  });

  it('prunes the webhook deliveries past the retention with the events, on an instance that does not deliver (SPEC §17)', async () => {
    const { rows } = await sql<{ id: string }>`
      insert into webhook_subscriptions (id, tenant_id, url, event_types, families, active, secret, cursor_xid)
      values (gen_random_uuid(), ${tenant.id}, 'https://example.com/hook', '{*}', '{lead}', false, 'sealed',
        pg_snapshot_xmin(pg_current_snapshot()))
      returning id`.execute(ctx.db);
    await sql`
      insert into webhook_deliveries (id, tenant_id, subscription_id, event_id, event_type, payload, status, created_at)
      values (gen_random_uuid(), ${tenant.id}, ${rows[0]?.id}, 'old-event', 'lead.created', '{}', 'failed',
        now() - interval '40 days')`.execute(ctx.db);
    const quiet = { info() {}, warn() {} } as unknown as Parameters<typeof pruneEventsPeriodically>[2];
    const stop = pruneEventsPeriodically(new EventRepository(ctx.db), 30, quiet, (cutoff) =>
      new WebhookRepository().pruneAll(ctx.db, cutoff),
    );
    await stop();
    const left = await sql`select 1 from webhook_deliveries where subscription_id = ${rows[0]?.id}`.execute(ctx.db);
    assert.equal(left.rows.length, 0);
    await sql`delete from webhook_subscriptions where id = ${rows[0]?.id}`.execute(ctx.db);
  });

  it('keeps events FUNIL_EVENT_RETENTION_DAYS; an after older than the pruned ones is a 410', async () => {
    const lead = await send('POST', '/leads', { name: 'Old', phone: '1' });
    const [old] = await historyOf(lead.body._id);
    await send('PUT', `/leads/${lead.body._id}`, { name: 'Newer' });
    const [, kept] = await historyOf(lead.body._id);
    await sql`update events set occurred_at = now() - interval '40 days' where object_id = ${lead.body._id} and type = 'lead.created'`.execute(
      ctx.db,
    );
    const removed = await pruneOld(new EventRepository(ctx.db), new Date(Date.now() - 30 * 86_400_000));
    assert.ok(removed >= 1);
    assert.deepEqual(
      (await historyOf(lead.body._id)).map((event) => event.id),
      [kept?.id],
    );
    const expired = await ctx.request('GET', `${API}/events`, {
      token: tenant.token,
      query: { after: old?.id as string },
    });
    assert.equal(expired.status, 410);
    assert.equal(expired.body.code, 'cursor_expired');
    const fine = await ctx.request('GET', `${API}/events`, {
      token: tenant.token,
      query: { after: kept?.id as string },
    });
    assert.equal(fine.status, 200);
  });
});

interface Event {
  id: string;
  type: string;
  occurredAt: string;
  tenant: string;
  actor: { tokenId: string | null };
  requestId: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever object the event holds.
  data: { object: Record<string, any>; changedFields: string[]; previous: Record<string, unknown> };
}
