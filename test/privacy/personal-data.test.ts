import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { SCOPES } from '../../src/auth/scopes.js';
import { EventRepository } from '../../src/events/event.repository.js';
import { pruneOld } from '../../src/events/event-retention.js';
import { assertError, assertForbidden } from '../helpers/assert-error.js';
import { feedSettled } from '../helpers/feed.js';
import { holdConnection } from '../helpers/held-connection.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const DELIVERING = {
  FUNIL_WEBHOOKS_DELIVER: 'true',
  FUNIL_WEBHOOKS_ALLOW_HTTP: 'true',
  FUNIL_WEBHOOKS_ALLOW_PRIVATE: 'true',
  FUNIL_WEBHOOKS_RETRY_DELAYS: '1,1',
};

interface Event {
  id: string;
  type: string;
  reason?: string;
  redacted?: boolean;
  data: { object: { _id: string; email?: string }; changedFields: string[]; previous: object | null };
}

describeEachBackend(
  'personal data: access and erasure (SPEC §17)',
  (ctx) => {
    const receiver = new WebhookReceiver();
    before(() => receiver.start());
    after(() => receiver.close());

    const call = (tenant: TestTenant, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) =>
      ctx.request(method, `${API}${path}`, { token: tenant.token, ...(body === undefined ? {} : { body }) });

    /** One person (ana@…) in a tenant: two leads, a customer, a lead that held the e-mail once, one deleted. */
    async function personIn(tenant: TestTenant) {
      const lead = (await call(tenant, 'POST', '/leads', { name: 'Ana', email: 'ANA@example.com' })).body;
      await call(tenant, 'PUT', `/leads/${lead._id}`, { score: 50 });
      const second = (await call(tenant, 'POST', '/leads', { name: 'Ana S.', email: 'ana@example.com' })).body;
      const customer = (await call(tenant, 'POST', '/customers', { name: 'Ana Souza', email: 'ana@example.com' })).body;
      const moved = (await call(tenant, 'POST', '/leads', { name: 'Ana old', email: 'ana@example.com' })).body;
      await call(tenant, 'PUT', `/leads/${moved._id}`, { email: 'ana.new@example.com' });
      const gone = (await call(tenant, 'POST', '/leads', { name: 'Ana gone', email: 'ana@example.com' })).body;
      await call(tenant, 'DELETE', `/leads/${gone._id}`);
      const other = (await call(tenant, 'POST', '/leads', { name: 'Bruno', email: 'bruno@example.com' })).body;
      return { lead, second, customer, moved, gone, other };
    }

    it('access: every record with the e-mail and the history of every record that held it, this tenant only', async () => {
      const [tenant, neighbour] = [await ctx.tenant(), await ctx.tenant()];
      const person = await personIn(tenant);
      await personIn(neighbour);
      const answer = await call(tenant, 'GET', '/personal-data?email=%20Ana@Example.com%20');
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.email, 'ana@example.com');
      assert.deepEqual(
        answer.body.leads.map((lead: { _id: string }) => lead._id),
        [person.lead._id, person.second._id],
      );
      assert.equal(answer.body.leads[0].score, 50);
      assert.deepEqual(
        answer.body.customers.map((customer: { _id: string }) => customer._id),
        [person.customer._id],
      );
      const events = answer.body.events as Event[];
      const byRecord = (id: string) => events.filter((event) => event.data.object._id === id).map((e) => e.type);
      assert.deepEqual(byRecord(person.lead._id), ['lead.created', 'lead.updated']);
      assert.deepEqual(byRecord(person.customer._id), ['customer.created']);
      assert.deepEqual(byRecord(person.moved._id), ['lead.created', 'lead.updated']);
      assert.deepEqual(byRecord(person.gone._id), ['lead.created', 'lead.deleted']);
      assert.deepEqual(byRecord(person.other._id), []);
      assert.equal(events.length, 8);
      const ids = events.map((event) => event.id);
      assert.deepEqual(ids, [...ids].sort(), 'feed order');

      const nobody = await call(tenant, 'GET', '/personal-data?email=nobody@example.com');
      assert.deepEqual(nobody.body, { email: 'nobody@example.com', leads: [], customers: [], events: [] });
      for (const query of ['', '?email=not-an-email', '?email=a@example.com&x=1']) {
        assertError(await call(tenant, 'GET', `/personal-data${query}`), 400, 'validation_failed', { details: true });
      }
    });

    it('access pages the history as the feed does (keyset on the event id), with every record on every page', async () => {
      const tenant = await ctx.tenant();
      const lead = (await call(tenant, 'POST', '/leads', { name: 'Ana', email: 'ana@example.com' })).body;
      const customer = (await call(tenant, 'POST', '/customers', { name: 'Ana', email: 'ana@example.com' })).body;
      for (let score = 1; score <= 23; score++) await call(tenant, 'PUT', `/leads/${lead._id}`, { score });
      const whole = await call(tenant, 'GET', '/personal-data?email=ana@example.com&limit=1000');
      assert.equal(whole.headers.link, undefined, 'one page holds it all: no next page');
      const all = (whole.body.events as Event[]).map((event) => event.id);
      assert.equal(all.length, 25);
      const first = await call(tenant, 'GET', '/personal-data?email=ana@example.com');
      assert.equal(first.body.events.length, 25, 'a person with fewer events than the default page gets them all');

      const pages: Event[][] = [];
      let next: string | undefined = `${API}/personal-data?email=ana@example.com&limit=10`;
      while (next) {
        const page = await ctx.request('GET', next.slice(next.indexOf(API)), { token: tenant.token });
        assert.equal(page.status, 200, page.text);
        assert.deepEqual(
          [page.body.leads.map((l: { _id: string }) => l._id), page.body.customers.map((c: { _id: string }) => c._id)],
          [[lead._id], [customer._id]],
          'leads and customers whole on every page',
        );
        pages.push(page.body.events);
        const link = /^<([^>]+)>; rel="next"$/.exec(String(page.headers.link ?? ''));
        if (link) assert.equal(page.headers['x-next-cursor'], page.body.events.at(-1).id);
        next = link?.[1];
      }
      assert.deepEqual(
        pages.map((page) => page.length),
        [10, 10, 5],
      );
      assert.deepEqual(
        pages.flat().map((event) => event.id),
        all,
        'the pages together: every event once, in feed order',
      );
      const afterThird = await call(tenant, 'GET', `/personal-data?email=ana@example.com&after=${all[2]}&limit=2`);
      assert.deepEqual(
        afterThird.body.events.map((event: Event) => event.id),
        all.slice(3, 5),
      );
      const seqPastBigint = `${all[0]?.slice(0, 16)}ffffffffffffffff`;
      for (const query of [
        'after=zz',
        `after=${all[0]?.slice(1)}`,
        `after=${seqPastBigint}`,
        'limit=0',
        'limit=1001',
        'limit=ten',
      ]) {
        assertError(
          await call(tenant, 'GET', `/personal-data?email=ana@example.com&${query}`),
          400,
          'validation_failed',
          { details: true },
        );
      }
    });

    it('access shows every committed event, even while a transaction open elsewhere holds the feed back', async (t) => {
      // PGlite has one connection: no transaction can stay open beside a request.
      if (ctx.backend !== 'postgres') return t.skip('needs a second connection');
      const tenant = await ctx.tenant();
      const release = await holdConnection(ctx.database, sql`select pg_current_xact_id()`);
      try {
        const lead = (await call(tenant, 'POST', '/leads', { name: 'Ana', email: 'ana@example.com' })).body;
        const feed = await ctx.request('GET', `${API}/events?objectId=${lead._id}`, {
          token: tenant.token,
          feedAsItStands: true,
        });
        assert.deepEqual(feed.body, [], 'the feed holds it back meanwhile (commit order)');
        const access = await call(tenant, 'GET', '/personal-data?email=ana@example.com');
        assert.deepEqual(
          access.body.events.map((event: Event) => event.type),
          ['lead.created'],
        );
        assert.equal(access.headers.link, undefined);
      } finally {
        await release();
      }
    });

    it('access: an after whose events retention removed is a 410 cursor_expired, as in the feed', async () => {
      const tenant = await ctx.tenant();
      const lead = (await call(tenant, 'POST', '/leads', { name: 'Ana', email: 'ana@example.com' })).body;
      await call(tenant, 'PUT', `/leads/${lead._id}`, { score: 1 });
      const [old, kept] = (await call(tenant, 'GET', '/personal-data?email=ana@example.com')).body.events as Event[];
      await sql`update events set occurred_at = now() - interval '40 days'
        where object_id = ${lead._id} and type = 'lead.created'`.execute(ctx.db);
      assert.ok((await pruneOld(new EventRepository(ctx.db), new Date(Date.now() - 30 * 86_400_000))) >= 1);
      assertError(
        await call(tenant, 'GET', `/personal-data?email=ana@example.com&after=${old?.id}`),
        410,
        'cursor_expired',
      );
      const rest = await call(tenant, 'GET', `/personal-data?email=ana@example.com&after=${kept?.id}`);
      assert.equal(rest.status, 200);
      assert.deepEqual(rest.body.events, []);
    });

    it('erasure: records, history, webhook payloads and kept answers; subscribers told; harmless twice', async () => {
      const [tenant, neighbour] = [await ctx.tenant(), await ctx.tenant()];
      const hook = await call(tenant, 'POST', '/webhooks', { url: receiver.url('/erasure'), events: ['*'] });
      assert.equal(hook.status, 201, hook.text);
      const kept = await ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        headers: { 'idempotency-key': 'form-submit-1' },
        body: { name: 'Ana form', email: 'ana@example.com' },
      });
      assert.equal(kept.status, 201);
      const person = await personIn(tenant);
      const theirs = await personIn(neighbour);
      // Every change so far delivered: 1 + 9 events of the tenant.
      await receiver.at('/erasure', 10);

      const erased = await call(tenant, 'POST', '/personal-data/erase', { email: 'Ana@Example.com' });
      assert.equal(erased.status, 200, erased.text);
      // Leads: the form's, Ana, Ana S. Customers: one. Events: 10 of the tenant, minus Bruno's.
      assert.deepEqual(erased.body, { leads: 3, customers: 1, events: 9 });

      for (const id of [kept.body._id, person.lead._id, person.second._id]) {
        assertError(await call(tenant, 'GET', `/leads/${id}`), 404, 'not_found');
      }
      assertError(await call(tenant, 'GET', `/customers/${person.customer._id}`), 404, 'not_found');
      const leads = (await call(tenant, 'GET', '/leads')).body.map((lead: { name: string }) => lead.name).sort();
      assert.deepEqual(leads, ['Ana old', 'Bruno']);
      assert.equal((await call(tenant, 'GET', '/personal-data?email=ana@example.com')).body.events.length, 0);

      // The feed: earlier events reduced to their record's id; one erasure event per record.
      await feedSettled(ctx.db, tenant.id);
      const feed = (await call(tenant, 'GET', '/events?limit=1000')).body as Event[];
      assert.ok(!JSON.stringify(feed).includes('ana@'), 'no trace of the e-mail in the feed');
      const redacted = feed.filter((event) => event.redacted);
      assert.equal(redacted.length, 9);
      for (const event of redacted) {
        assert.deepEqual(Object.keys(event.data.object), ['_id']);
        assert.equal(event.data.previous, null);
      }
      const erasures = feed.filter((event) => event.reason === 'erasure');
      assert.deepEqual(erasures.map((event) => event.type).sort(), [
        'customer.deleted',
        'lead.deleted',
        'lead.deleted',
        'lead.deleted',
      ]);
      for (const event of erasures)
        assert.deepEqual(event.data, { object: event.data.object, changedFields: [], previous: {} });
      const bruno = feed.find((event) => event.data.object._id === person.other._id);
      assert.equal(bruno?.data.object.email, 'bruno@example.com');
      // The moved lead keeps its record, without its past.
      const moved = await call(tenant, 'GET', `/leads/${person.moved._id}`);
      assert.equal(moved.body.email, 'ana.new@example.com');

      // Webhooks: the stored payloads are redacted; subscribers receive the erasure events.
      const { rows } = await sql<{ payload: string }>`
        select payload from webhook_deliveries where tenant_id = ${tenant.id}`.execute(ctx.db);
      assert.ok(rows.length >= 10);
      assert.ok(
        rows.every((row) => !row.payload.includes('ana@')),
        'no delivery payload holds the e-mail',
      );
      const received = await receiver.at('/erasure', 14);
      const told = received.map((delivery) => JSON.parse(delivery.body) as Event).filter((e) => e.reason === 'erasure');
      assert.equal(told.length, 4);

      // Answers kept for Idempotency-Key replays that showed the person are gone.
      const answers = await sql<{ count: number }>`
        select count(*)::int as count from idempotency_keys
        where tenant_id = ${tenant.id} and strpos(response_body, 'ana@') > 0`.execute(ctx.db);
      assert.equal(answers.rows[0]?.count, 0);

      // The neighbour's Ana is untouched.
      assert.equal((await call(neighbour, 'GET', `/leads/${theirs.lead._id}`)).status, 200);
      const hers = await call(neighbour, 'GET', '/personal-data?email=ana@example.com');
      assert.equal(hers.body.leads.length, 2);
      assert.equal(hers.body.events.length, 8);

      const again = await call(tenant, 'POST', '/personal-data/erase', { email: 'ana@example.com' });
      assert.deepEqual(again.body, { leads: 0, customers: 0, events: 0 });
    });

    it("erasure reaches a record merged away, its undo and merge again, and a customer's merge", async () => {
      const tenant = await ctx.tenant();
      const post = async (path: string, body: unknown) => {
        const res = await call(tenant, 'POST', path, body);
        assert.equal(res.status < 300, true, res.text);
        return res.body;
      };
      const keep = await post('/leads', { name: 'Keep Me', email: 'keep@example.com' });
      const source = await post('/leads', { name: 'Erase Me', email: 'eraseme@example.com', notes: 'private note' });
      const merge = { targetId: keep._id, sourceIds: [source._id] };
      const first = await post('/leads/merge', merge);
      await post(`/merges/${first.merge.id}/undo`, undefined);
      await post('/leads/merge', merge);
      const customer = await post('/customers', { name: 'Keep Co', email: 'keep.co@example.com' });
      const merged = await post('/customers', { name: 'Erase Co', email: 'eraseme@example.com' });
      await post('/customers/merge', { targetId: customer._id, sourceIds: [merged._id] });

      const erased = await call(tenant, 'POST', '/personal-data/erase', { email: 'eraseme@example.com' });
      assert.equal(erased.status, 200, erased.text);
      // The lead: created, deleted by the merge, created by the undo, deleted by the merge again; the customer: two.
      assert.deepEqual(erased.body, { leads: 0, customers: 0, events: 6 });
      await feedSettled(ctx.db, tenant.id);
      const feed = (await call(tenant, 'GET', '/events?limit=1000')).body as Event[];
      assert.ok(!JSON.stringify(feed).includes('eraseme@'), 'no trace of the e-mail in the feed');
      const history = (await call(tenant, 'GET', `/events?objectId=${source._id}`)).body as Event[];
      assert.deepEqual(
        history.map((event) => [event.type, event.reason ?? null, event.redacted ?? false]),
        [
          ['lead.created', null, true],
          ['lead.deleted', 'merge', true],
          ['lead.created', 'unmerge', true],
          ['lead.deleted', 'merge', true],
        ],
      );
      const access = await call(tenant, 'GET', '/personal-data?email=eraseme@example.com');
      assert.deepEqual(access.body.events, []);
      assert.equal(
        (await call(tenant, 'GET', `/leads/${keep._id}`)).body.email,
        'keep@example.com',
        'the target stays',
      );
    });

    it('a delivery still to be retried is retried with the redacted event', async () => {
      const tenant = await ctx.tenant();
      // Refused twice: the retries come 1 s apart, the erasure well before the last.
      receiver.respond('/pending', 500, 500);
      const hook = await call(tenant, 'POST', '/webhooks', { url: receiver.url('/pending'), events: ['lead.created'] });
      assert.equal(hook.status, 201);
      const lead = (await call(tenant, 'POST', '/leads', { name: 'Ana', email: 'ana@example.com' })).body;
      const [refused] = await receiver.at('/pending', 1);
      assert.ok(refused?.body.includes('ana@example.com'));
      const erased = await call(tenant, 'POST', '/personal-data/erase', { email: 'ana@example.com' });
      assert.deepEqual(erased.body, { leads: 1, customers: 0, events: 1 });
      const [, , retried] = await receiver.at('/pending', 3);
      assert.ok(retried);
      const event = JSON.parse(retried.body) as Event;
      assert.equal(event.type, 'lead.created');
      assert.equal(event.redacted, true);
      assert.deepEqual(event.data.object, { _id: lead._id });
      await feedSettled(ctx.db, tenant.id);
      const history = await call(tenant, 'GET', `/events?objectId=${lead._id}`);
      assert.deepEqual(
        history.body.map((e: Event) => [e.type, e.redacted ?? false, e.reason ?? null]),
        [
          ['lead.created', true, null],
          ['lead.deleted', false, 'erasure'],
        ],
      );
    });

    it('a record found by its e-mail that holds another by the time it is locked is not erased', async () => {
      const tenant = await ctx.tenant();
      const lead = (await call(tenant, 'POST', '/leads', { name: 'Ana', email: 'ana@example.com' })).body;
      await call(tenant, 'PUT', `/leads/${lead._id}`, { email: 'bia@example.com' });
      const service = ctx.services().leads;
      const actor = { tenantId: tenant.id, tokenId: tenant.tokenId, requestId: 'r' };
      let redacted = false;
      const erased = await service.erase(ctx.db, actor, lead._id, 'ana@example.com', async () => {
        redacted = true;
      });
      assert.equal(erased, false);
      assert.equal(redacted, false);
      assert.equal((await call(tenant, 'GET', `/leads/${lead._id}`)).body.email, 'bia@example.com');
    });

    it('needs privacy:read to look and privacy:write to erase; nothing else will do', async () => {
      const tenant = await ctx.tenant();
      await call(tenant, 'POST', '/leads', { name: 'Ana', email: 'ana@example.com' });
      const reader = await ctx.token(tenant.id, ['privacy:read']);
      const everythingElse = await ctx.token(
        tenant.id,
        SCOPES.filter((scope) => !scope.startsWith('privacy:')),
      );
      const url = `${API}/personal-data?email=ana@example.com`;
      assertForbidden(await ctx.request('GET', url, { token: everythingElse.token }));
      assert.equal((await ctx.request('GET', url, { token: reader.token })).status, 200);
      for (const token of [reader.token, everythingElse.token]) {
        assertForbidden(
          await ctx.request('POST', `${API}/personal-data/erase`, { token, body: { email: 'ana@example.com' } }),
        );
      }
      assert.equal((await call(tenant, 'GET', url.slice(API.length))).body.leads.length, 1);
    });
  },
  DELIVERING,
);
