import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { assertForbidden, assertInvalidField } from '../helpers/assert-error.js';
import { define, fieldBody } from '../helpers/custom-fields.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { waitFor } from '../helpers/wait-for.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const LOCAL_TARGETS = { FUNIL_WEBHOOKS_ALLOW_HTTP: 'true', FUNIL_WEBHOOKS_ALLOW_PRIVATE: 'true' };

interface Sent {
  type: string;
  actor: { tokenId: string | null };
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever object the event holds.
  data: { object: Record<string, any>; changedFields: string[] };
}

/** SPEC §22: subscriptions with a filter deliver only the events it lets through. */
describeEachBackend(
  'webhook subscriptions with a filter (SPEC §22)',
  (ctx) => {
    const receiver = new WebhookReceiver();
    let path = 0;
    before(() => receiver.start());
    after(() => receiver.close());

    async function subscribe(token: string, body: Record<string, unknown>) {
      const url = receiver.url(`/filtered-${++path}`);
      const answer = await ctx.request('POST', `${API}/webhooks`, { token, body: { url, events: ['*'], ...body } });
      assert.equal(answer.status, 201, answer.text);
      return { ...answer.body, path: new URL(url).pathname } as { id: string; path: string; filter: unknown };
    }
    const write = async (token: string, method: string, url: string, body?: unknown) => {
      const res = await ctx.request(method, `${API}${url}`, { token, body });
      assert.ok(res.status < 300, `${method} ${url}: ${res.status} ${res.text}`);
      return res.body;
    };

    /**
     * What the dispatcher made of every event of the tenant so far: once its position is past
     * them all, the delivery log holds every delivery it will ever make of them.
     */
    async function dispatched(tenant: TestTenant, hookId: string): Promise<Sent[]> {
      await waitFor(async () => {
        const { rows } = await sql<{ done: boolean }>`
          select not exists (
            select 1 from events e where e.tenant_id = s.tenant_id
              and (case split_part(e.type, '.', 1) when 'pipeline' then 'lead' else split_part(e.type, '.', 1) end)
                = any(s.families)
              and (e.xid, e.seq) > (s.cursor_xid, s.cursor_seq)
          ) as done
          from webhook_subscriptions s where s.id = ${hookId}`.execute(ctx.db);
        return rows[0]?.done ? true : undefined;
      }, 30_000);
      // Read once the dispatcher is past them all: on a shared PostgreSQL server the feed shows an
      // event only when no older transaction (of any database) is still open.
      await waitFor(async () => ((await readFeed(tenant)) ? true : undefined));
      const log = await ctx.request('GET', `${API}/webhooks/${hookId}/deliveries`, {
        token: tenant.token,
        query: { limit: '100' },
      });
      assert.equal(log.status, 200);
      return log.body
        .reverse()
        .map((delivery: { eventId: string }) => delivery.eventId)
        .map((id: string) => eventsById.get(id) ?? { missing: id });
    }
    /** Every event of the feed so far, by id: what the log's event ids name. */
    const eventsById = new Map<string, Sent>();
    async function readFeed(tenant: TestTenant): Promise<boolean> {
      const feed = await ctx.request('GET', `${API}/events`, { token: tenant.token, query: { limit: '1000' } });
      for (const event of feed.body) eventsById.set(event.id, event);
      const { rows } = await sql<{ count: number }>`
        select count(*)::int as count from events where tenant_id = ${tenant.id}`.execute(ctx.db);
      return feed.body.length >= (rows[0]?.count ?? 0);
    }
    async function deliveredOf(tenant: TestTenant, hook: { id: string; path: string }) {
      const made = await dispatched(tenant, hook.id);
      const arrived = await receiver.at(hook.path, made.length);
      assert.equal(arrived.length, made.length, 'every delivery in the log was sent, and nothing else');
      return made;
    }
    const named = (events: Sent[]) => events.map((event) => `${event.type} ${event.data.object.name}`);

    it("keeps a subscription's filter: shown as sent, changed, removed with null; null when it has none", async () => {
      const tenant = await ctx.tenant();
      const filter = {
        types: ['lead.created', 'lead.status_changed'],
        changedFields: ['status'],
        where: { any: [{ status: { in: ['won', 'lost'] } }, { not: { score: { lte: 10 } } }] },
        excludeActors: ['self'],
      };
      const hook = await subscribe(tenant.token, { filter });
      assert.deepEqual(hook.filter, filter);
      const read = await ctx.request('GET', `${API}/webhooks/${hook.id}`, { token: tenant.token });
      assert.deepEqual(read.body.filter, filter);
      const changed = await ctx.request('PUT', `${API}/webhooks/${hook.id}`, {
        token: tenant.token,
        body: { filter: { where: { score: { gte: 1 } } } },
      });
      assert.equal(changed.status, 200, changed.text);
      assert.deepEqual(changed.body.filter, { where: { score: { gte: 1 } } });
      const removed = await ctx.request('PUT', `${API}/webhooks/${hook.id}`, {
        token: tenant.token,
        body: { filter: null },
      });
      assert.equal(removed.body.filter, null);
      const plain = await subscribe(tenant.token, {});
      assert.equal(plain.filter, null);
      // An empty filter lets everything through: it is kept as none.
      const empty = await ctx.request('PUT', `${API}/webhooks/${plain.id}`, {
        token: tenant.token,
        body: { filter: {} },
      });
      assert.equal(empty.body.filter, null);
      const listed = await ctx.request('GET', `${API}/webhooks`, { token: tenant.token });
      assert.deepEqual(
        listed.body.map((webhook: { filter: unknown }) => webhook.filter),
        [null, null],
      );
    });

    it('delivers only what passes `where`: an event left out makes no delivery and no log entry, and the position moves past it', async () => {
      const tenant = await ctx.tenant();
      const hook = await subscribe(tenant.token, { filter: { where: { score: { gte: 50 } } } });
      const everything = await subscribe(tenant.token, {});
      await write(tenant.token, 'POST', '/leads', { name: 'Cold', phone: '1', score: 10 });
      const warm = await write(tenant.token, 'POST', '/leads', { name: 'Warm', phone: '1', score: 40 });
      await write(tenant.token, 'POST', '/leads', { name: 'Hot', phone: '1', score: 90 });
      await write(tenant.token, 'PUT', `/leads/${warm._id}`, { score: 60 });
      await write(tenant.token, 'POST', '/leads', { name: 'Cold again', phone: '1', score: 0 });
      assert.deepEqual(named(await deliveredOf(tenant, hook)), ['lead.created Hot', 'lead.updated Warm']);
      assert.equal((await deliveredOf(tenant, everything)).length, 5, 'the same events, unfiltered');
      // Its position is the last event's, filtered out or not: nothing is read again.
      const { rows } = await sql<{ behind: number }>`
        select count(*)::int as behind from events e, webhook_subscriptions s
        where s.id = ${hook.id} and e.tenant_id = s.tenant_id and (e.xid, e.seq) > (s.cursor_xid, s.cursor_seq)`.execute(
        ctx.db,
      );
      assert.equal(rows[0]?.behind, 0);
    });

    it('changedFields: updates, status changes and custom values, only of the fields named', async () => {
      const tenant = await ctx.tenant();
      await define(ctx, tenant, fieldBody('tier', { type: 'select', options: ['gold', 'silver'] }));
      await define(ctx, tenant, fieldBody('note'));
      const hook = await subscribe(tenant.token, {
        events: ['lead.updated', 'lead.status_changed'],
        filter: { changedFields: ['status', 'custom.tier'] },
      });
      const lead = await write(tenant.token, 'POST', '/leads', { name: 'Ana', phone: '1' });
      await write(tenant.token, 'PUT', `/leads/${lead._id}`, { name: 'Ana Lima' });
      await write(tenant.token, 'PUT', `/leads/${lead._id}/status`, { status: 'qualified' });
      await write(tenant.token, 'PUT', `/leads/${lead._id}`, { custom: { note: 'called' } });
      await write(tenant.token, 'PUT', `/leads/${lead._id}`, { custom: { tier: 'gold' } });
      await write(tenant.token, 'PUT', `/leads/${lead._id}`, { score: 30, status: 'won' });
      const delivered = await deliveredOf(tenant, hook);
      assert.deepEqual(
        delivered.map((event) => [event.type, event.data.changedFields]),
        [
          ['lead.status_changed', ['status']],
          ['lead.updated', ['custom.tier']],
          ['lead.status_changed', ['status', 'score']],
        ],
      );
    });

    it('excludeActors: a write by the subscriber\'s own token ("self") or a token named makes no delivery; the same write by another does', async () => {
      const tenant = await ctx.tenant();
      const scopes = ['leads:read', 'leads:write', 'webhooks:read', 'webhooks:write'] as const;
      const crm = await ctx.token(tenant.id, scopes);
      const people = await ctx.token(tenant.id, scopes);
      const echoFree = await subscribe(crm.token, { filter: { excludeActors: ['self'] } });
      const notPeople = await subscribe(crm.token, { filter: { excludeActors: [people.id] } });
      await write(crm.token, 'POST', '/leads', { name: 'Written by the CRM', phone: '1' });
      await write(people.token, 'POST', '/leads', { name: 'Written by people', phone: '1' });
      assert.deepEqual(named(await deliveredOf(tenant, echoFree)), ['lead.created Written by people']);
      assert.deepEqual(named(await deliveredOf(tenant, notPeople)), ['lead.created Written by the CRM']);
      // "self" is the owner: whoever turns it on again becomes it.
      const hookUrl = `${API}/webhooks/${echoFree.id}`;
      assert.equal((await ctx.request('PUT', hookUrl, { token: crm.token, body: { active: false } })).status, 200);
      assert.equal((await ctx.request('PUT', hookUrl, { token: people.token, body: { active: true } })).status, 200);
      await write(crm.token, 'POST', '/leads', { name: 'CRM again', phone: '1' });
      await write(people.token, 'POST', '/leads', { name: 'People again', phone: '1' });
      assert.deepEqual(named(await deliveredOf(tenant, echoFree)), [
        'lead.created Written by people',
        'lead.created CRM again',
      ]);
    });

    it('sees only the families its owner could read: `where` never lets through an event of another', async () => {
      const tenant = await ctx.tenant();
      const leadsOnly = await ctx.token(tenant.id, ['leads:read', 'webhooks:write', 'webhooks:read']);
      const hook = await subscribe(leadsOnly.token, { filter: { where: { email: { exists: true } } } });
      await write(tenant.token, 'POST', '/customers', { name: 'Customer', email: 'customer@example.com' });
      await write(tenant.token, 'POST', '/leads', { name: 'Lead', email: 'lead@example.com' });
      await write(tenant.token, 'POST', '/leads', { name: 'No e-mail', phone: '1' });
      assert.deepEqual(named(await deliveredOf(tenant, hook)), ['lead.created Lead']);
    });

    it('refuses a bad filter with a 400 naming its faulty part, and a family the token cannot read with a 403 first', async () => {
      const tenant = await ctx.tenant();
      const url = receiver.url('/never');
      const create = (filter: unknown, token = tenant.token, events = ['*']) =>
        ctx.request('POST', `${API}/webhooks`, { token, body: { url, events, filter } });
      const cases: [unknown, string][] = [
        [{ where: { all: [{ status: { eq: 'won' } }, { status: { eq: [1] } }] } }, 'filter.where.all.1.status.eq'],
        [
          { where: { any: [{ not: { all: [{ any: [{ score: { gte: 1 } }] }] } }] } },
          'filter.where.any.0.not.all.0.any',
        ],
        [{ where: { scroe: { gte: 1 } } }, 'filter.where.scroe'],
        [{ changedFields: ['stauts'] }, 'filter.changedFields.0'],
        [{ excludeActors: ['someone'] }, 'filter.excludeActors.0'],
        [{ unknown: true }, 'filter.unknown'],
        ['status=won', 'filter'],
      ];
      for (const [filter, field] of cases) assertInvalidField(await create(filter), field);
      // Fields of the objects of the events it receives: a customer's, for a lead subscription, is not one.
      assertInvalidField(
        await create({ where: { autoPayment: { eq: true } } }, tenant.token, ['lead.created']),
        'filter.where.autoPayment',
      );
      const leadsOnly = (await ctx.token(tenant.id, ['leads:read', 'webhooks:write'])).token;
      assertForbidden(await create({ types: ['customer.created'], where: { bad: 1 } }, leadsOnly));
      assertInvalidField(await create({ where: { autoPayment: { eq: true } } }, leadsOnly), 'filter.where.autoPayment');

      const hook = await subscribe(tenant.token, {});
      const hookUrl = `${API}/webhooks/${hook.id}`;
      assertInvalidField(
        await ctx.request('PUT', hookUrl, { token: tenant.token, body: { filter: { where: { status: {} } } } }),
        'filter.where.status',
      );
      // Changing what it delivers needs the read scopes of its families, as changing `events` does.
      const writeOnly = (await ctx.token(tenant.id, ['webhooks:write'])).token;
      assertForbidden(await ctx.request('PUT', hookUrl, { token: writeOnly, body: { filter: null } }));
      const leadsHook = await subscribe(leadsOnly, {});
      assertForbidden(
        await ctx.request('PUT', `${API}/webhooks/${leadsHook.id}`, {
          token: tenant.token,
          body: { filter: { types: ['customer.created'] } },
        }),
      );
    });

    it('serves 25 subscriptions of one tenant, each with its own filter, each exactly what passes it', async () => {
      const tenant = await ctx.tenant();
      const hooks = [];
      for (let n = 0; n < 25; n++) {
        hooks.push(await subscribe(tenant.token, { filter: { where: { score: { gte: n * 4 } } } }));
      }
      const scores = Array.from({ length: 30 }, (_, n) => (n * 37) % 101);
      await write(tenant.token, 'POST', '/leads/batch', {
        items: scores.map((score, n) => ({ name: `Lead ${n}`, phone: '1', score })),
      });
      for (const [n, hook] of hooks.entries()) {
        const delivered = await deliveredOf(tenant, hook);
        assert.deepEqual(
          delivered.map((event) => event.data.object.score),
          scores.filter((score) => score >= n * 4),
          `subscription ${n}`,
        );
      }
    });
  },
  { FUNIL_WEBHOOKS_DELIVER: 'true', ...LOCAL_TARGETS },
);
