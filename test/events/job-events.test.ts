import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { Webhook as Verifier } from 'standardwebhooks';
import { exportRepository } from '../../src/exports/export.repository.js';
import { importRepository } from '../../src/imports/import.repository.js';
import { newId } from '../../src/shared/ids.js';
import { exported } from '../exports/export-fixtures.js';
import { assertForbidden } from '../helpers/assert-error.js';
import { feedSettled } from '../helpers/feed.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { waitFor } from '../helpers/wait-for.js';
import { type Received, WebhookReceiver } from '../helpers/webhook-receiver.js';
import { imported, type Json } from '../imports/import-helpers.js';

const LOCAL_TARGETS = { FUNIL_WEBHOOKS_ALLOW_HTTP: 'true', FUNIL_WEBHOOKS_ALLOW_PRIVATE: 'true' };
const JOB_TYPES = 'import.finished,export.finished';

/**
 * SPEC §23's `import.finished` and `export.finished`: written with the step that ends the job, in
 * the feed and to webhooks, each only to readers of its resource (SPEC §14's scopes).
 */
describeEachBackend(
  'the events of imports and exports (SPEC §23)',
  (ctx) => {
    const receiver = new WebhookReceiver();
    let path = 0;
    let tenant: TestTenant;
    /** Tokens of the tenant: each read scope alone (with the webhook scopes), and none. */
    let leadsOnly: string;
    let customersOnly: string;
    let noRead: string;
    /** The jobs made in `before`, as `GET /imports/{id}` and `GET /exports/{id}` showed them when over. */
    const jobs: Record<string, Json> = {};

    /** The tenant's feed as `token` reads it, with `query`. */
    async function feed(token: string, query: Record<string, string> = {}): Promise<Json[]> {
      await feedSettled(ctx.db, tenant.id);
      const res = await ctx.request('GET', `${API}/events`, { token, query: { limit: '1000', ...query } });
      assert.equal(res.status, 200, res.text);
      return res.body;
    }
    const jobIds = (events: Json[]) => events.map((event) => event.data.object.id);
    const get = async (url: string) => (await ctx.api(tenant, 'GET', url)).body;

    async function subscribe(token: string, events: string[]) {
      const url = receiver.url(`/jobs-${++path}`);
      const answer = await ctx.request('POST', `${API}/webhooks`, { token, body: { url, events } });
      assert.equal(answer.status, 201, answer.text);
      return { ...answer.body, path: new URL(url).pathname } as { id: string; secret: string; path: string };
    }
    /** The deliveries the log of a subscription holds, oldest first, once `count` have arrived. */
    async function delivered(hook: { id: string; path: string }, count: number): Promise<Received[]> {
      const arrived = await receiver.at(hook.path, count);
      const log = await waitFor(async () => {
        const answer = await ctx.request('GET', `${API}/webhooks/${hook.id}/deliveries`, { token: tenant.token });
        return answer.body.length >= count ? answer.body : undefined;
      });
      assert.equal(log.length, count, 'no other delivery was made');
      return arrived;
    }

    let everything: { id: string; secret: string; path: string };
    let customersHook: { id: string; secret: string; path: string };
    let leadsHook: { id: string; secret: string; path: string };

    before(async () => {
      await receiver.start();
      tenant = await ctx.tenant('Jobs');
      const hooks = ['webhooks:read', 'webhooks:write'] as const;
      leadsOnly = (await ctx.token(tenant.id, ['leads:read', ...hooks])).token;
      customersOnly = (await ctx.token(tenant.id, ['customers:read', ...hooks])).token;
      noRead = (await ctx.token(tenant.id, ['leads:write', 'customers:write', ...hooks])).token;
      // Subscribed before the jobs, as a real integration is: by the owner of every scope, and by a
      // token of one resource each.
      everything = await subscribe(tenant.token, ['import.finished', 'export.finished']);
      customersHook = await subscribe(customersOnly, ['import.finished', 'export.finished']);
      leadsHook = await subscribe(leadsOnly, ['*']);

      jobs.leadImport = await imported(
        ctx,
        tenant,
        'name,phone,source\nAna,11 3333-0001,jobs\nBia,,jobs\n',
        'resource=lead',
      );
      jobs.customerImport = await imported(ctx, tenant, 'name,email\nCia Ltda,cia@jobs.example\n', 'resource=customer');
      // An import whose job has not run yet (its steps were never queued), cancelled by the API.
      jobs.cancelledImport = await unstartedImport('lead');
      const cancelled = await ctx.api(tenant, 'POST', `/imports/${jobs.cancelledImport}/cancel`);
      assert.equal(cancelled.status, 200, cancelled.text);
      jobs.cancelledImport = cancelled.body;
      // One whose chunk failed as often as the queue tries it: ImportJobs marks it failed so.
      const failing = await unstartedImport('customer');
      await importRepository.fail(ctx.db, tenant.id, failing);
      jobs.failedImport = await get(`/imports/${failing}`);

      jobs.leadExport = await get(`/exports/${await exported(ctx, tenant, { resource: 'lead', format: 'csv' })}`);
      jobs.customerExport = await get(
        `/exports/${await exported(ctx, tenant, { resource: 'customer', format: 'ndjson' })}`,
      );
      // One that failed for good (its runs spent): ExportRuns marks it failed so.
      const failedExport = await exportRepository.create(ctx.db, tenant.id, {
        id: newId(),
        resource: 'lead',
        format: 'csv',
        query: { email: 'someone@jobs.example' },
        fields: null,
        tokenId: tenant.tokenId,
      });
      await exportRepository.fail(ctx.db, tenant.id, failedExport.id);
      jobs.failedExport = await get(`/exports/${failedExport.id}`);
    });
    after(() => receiver.close());

    /** An import stored as an upload leaves it (one row), whose job was never queued: it waits, `queued`. */
    async function unstartedImport(resource: 'lead' | 'customer'): Promise<string> {
      const id = newId();
      await importRepository.create(ctx.db, {
        tenantId: tenant.id,
        id,
        resource,
        format: 'csv',
        upsert: null,
        dryRun: false,
        tokenId: tenant.tokenId,
        columns: ['name'],
        delimiter: ',',
      });
      await importRepository.received(ctx.db, tenant.id, id, 1);
      return id;
    }

    it('each import that ends writes one import.finished: the import as GET /imports/{id} shows it then', async () => {
      const events = await feed(tenant.token, { types: 'import.finished' });
      const imports = [jobs.leadImport, jobs.customerImport, jobs.cancelledImport, jobs.failedImport];
      assert.deepEqual(
        events.map((event) => event.data.object),
        imports,
        'in the order they ended, each as it was then',
      );
      assert.deepEqual(
        imports.map((job) => [job.resource, job.status, job.total, job.processed, job.created, job.failed]),
        [
          ['lead', 'succeeded', 2, 2, 1, 1],
          ['customer', 'succeeded', 1, 1, 1, 0],
          ['lead', 'cancelled', 1, 0, 0, 0],
          ['customer', 'failed', 1, 0, 0, 0],
        ],
      );
      for (const event of events) {
        assert.equal(event.type, 'import.finished');
        assert.equal(event.actor.tokenId, tenant.tokenId, 'the token that made the import');
        assert.equal(event.requestId, `import:${event.data.object.id}`);
        assert.deepEqual(event.data.changedFields, []);
        assert.deepEqual(event.data.previous, {});
      }
      // An import's own history (`objectId`): its end, once.
      const history = await feed(tenant.token, { objectId: jobs.leadImport.id });
      assert.deepEqual(
        history.map((event) => event.type),
        ['import.finished'],
      );
    });

    it('each export that ends writes one export.finished, without the query it was asked with', async () => {
      const events = await feed(tenant.token, { types: 'export.finished' });
      assert.deepEqual(
        events.map((event) => event.data.object),
        [jobs.leadExport, jobs.customerExport, jobs.failedExport],
      );
      assert.deepEqual(
        events.map((event) => [event.data.object.resource, event.data.object.status]),
        [
          ['lead', 'succeeded'],
          ['customer', 'succeeded'],
          ['lead', 'failed'],
        ],
      );
      assert.equal(jobs.leadExport.total, 1, 'the lead imported (its second row has neither e-mail nor phone)');
      const { rows } = await sql<{ object: unknown }>`
        select object from events where tenant_id = ${tenant.id} and object_id = ${jobs.failedExport.id}`.execute(
        ctx.db,
      );
      assert.equal(rows.length, 1);
      assert.equal(
        JSON.stringify(rows[0]?.object).includes('someone@jobs.example'),
        false,
        'a filter may name a person',
      );
    });

    it("a token sees a job's event only for the resource it reads, under the same type names", async () => {
      const byLeadReader = await feed(leadsOnly, { types: JOB_TYPES });
      assert.deepEqual(jobIds(byLeadReader), [
        jobs.leadImport.id,
        jobs.cancelledImport.id,
        jobs.leadExport.id,
        jobs.failedExport.id,
      ]);
      const byCustomerReader = await feed(customersOnly, { types: JOB_TYPES });
      assert.deepEqual(jobIds(byCustomerReader), [
        jobs.customerImport.id,
        jobs.failedImport.id,
        jobs.customerExport.id,
      ]);
      // The whole feed, too: a customers-only reader gets no lead, nor a lead import's end.
      const all = await feed(customersOnly);
      assert.ok(all.every((event) => !event.type.startsWith('lead.')));
      assert.deepEqual(
        all.filter((event) => event.type.endsWith('.finished')).map((event) => event.data.object.resource),
        ['customer', 'customer', 'customer'],
      );
      // A record's history by another resource's reader: nothing.
      assert.deepEqual(await feed(customersOnly, { objectId: jobs.leadImport.id }), []);
      // Without a read scope: 403, as for every event.
      const refused = await ctx.request('GET', `${API}/events`, { token: noRead, query: { types: 'import.finished' } });
      assertForbidden(refused);
    });

    it('filters (SPEC §22): `where` tests the import, `changedFields` lets a job’s end through', async () => {
      const filter = {
        types: ['import.finished'],
        changedFields: ['status'],
        where: { status: { in: ['cancelled', 'failed'] } },
      };
      const full = await feed(tenant.token, { filter: JSON.stringify(filter) });
      assert.deepEqual(jobIds(full), [jobs.cancelledImport.id, jobs.failedImport.id]);
      const byCustomerReader = await feed(customersOnly, { filter: JSON.stringify(filter) });
      assert.deepEqual(jobIds(byCustomerReader), [jobs.failedImport.id]);
      const onlyExports = { types: ['export.finished'], where: { resource: { eq: 'lead' } } };
      assert.deepEqual(jobIds(await feed(customersOnly, { filter: JSON.stringify(onlyExports) })), []);
      const excluded = await feed(tenant.token, {
        types: JOB_TYPES,
        filter: JSON.stringify({ excludeActors: ['self'] }),
      });
      assert.deepEqual(excluded, [], "the jobs' events are their maker's: `self` leaves them out");
      const bad = await ctx.request('GET', `${API}/events`, {
        token: tenant.token,
        query: { filter: JSON.stringify({ types: ['import.finished'], where: { nope: { eq: 1 } } }) },
      });
      assert.equal(bad.status, 400, bad.text);
    });

    it('delivers them to webhooks, signed, exactly as the feed shows them; each only to owners of its resource', async () => {
      const fullFeed = await feed(tenant.token, { types: JOB_TYPES });
      assert.equal(fullFeed.length, 7);
      const all = await delivered(everything, fullFeed.length);
      const bodies = all.map((delivery) => new Verifier(everything.secret).verify(delivery.body, headersOf(delivery)));
      assert.deepEqual([...bodies].sort(byId), fullFeed, 'every import.finished and export.finished, as in the feed');
      for (const delivery of all) {
        const event = JSON.parse(delivery.body);
        assert.equal(delivery.headers['webhook-id'], event.id);
      }

      const customers = await feed(customersOnly, { types: JOB_TYPES });
      const toCustomers = await delivered(customersHook, customers.length);
      assert.deepEqual(toCustomers.map((delivery) => JSON.parse(delivery.body)).sort(byId), customers);
      assert.ok(
        toCustomers.every((delivery) => JSON.parse(delivery.body).data.object.resource === 'customer'),
        'no lead import or export reached the customers-only owner',
      );

      const leads = await feed(leadsOnly);
      const toLeads = await delivered(leadsHook, leads.length);
      const types = toLeads.map((delivery) => JSON.parse(delivery.body));
      assert.ok(types.every((event) => !event.type.startsWith('customer.')));
      assert.deepEqual(
        types.filter((event) => event.type.endsWith('.finished')).map((event) => event.data.object.resource),
        ['lead', 'lead', 'lead', 'lead'],
      );
    });

    it('subscribing to a job’s events needs a read scope of either resource, as the feed does', async () => {
      const answer = await ctx.request('POST', `${API}/webhooks`, {
        token: noRead,
        body: { url: receiver.url('/refused'), events: ['import.finished'] },
      });
      assertForbidden(answer);
      // A customers-only token may change the subscription of its own: it receives its resource's only.
      const changed = await ctx.request('PUT', `${API}/webhooks/${customersHook.id}`, {
        token: customersOnly,
        body: { events: ['export.finished'] },
      });
      assert.equal(changed.status, 200, changed.text);
      // The owner of both resources' subscription is not a customers-only token's to redirect.
      const redirect = await ctx.request('PUT', `${API}/webhooks/${everything.id}`, {
        token: customersOnly,
        body: { url: receiver.url('/elsewhere') },
      });
      assertForbidden(redirect);
    });
  },
  { FUNIL_WEBHOOKS_DELIVER: 'true', ...LOCAL_TARGETS },
);

const byId = (a: Json, b: Json) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function headersOf(delivery: Received): Record<string, string> {
  return Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name, String(value)]));
}
