import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { define, fieldBody } from '../helpers/custom-fields.js';
import { feedSettled } from '../helpers/feed.js';
import { McpTestClient, mcpUrl, toolCoverage } from '../helpers/mcp-client.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { LEAD_MESSAGE, LEAD_MESSAGE_EN, UNKNOWN_ID } from '../leads/lead-fixtures.js';

const TOOLS = [
  'search_leads',
  'get_lead',
  'create_lead',
  'update_lead',
  'set_lead_status',
  'convert_lead',
  'lead_history',
  'list_pipelines',
  'pipeline_summary',
  'search_customers',
  'get_customer',
  'create_customer',
  'update_customer',
];

describeEachBackend('MCP tools: the REST API through an assistant', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;
  let mcp: McpTestClient;
  let english: McpTestClient;
  let url: URL;

  const rest = (
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    options: { query?: Record<string, string>; body?: unknown } = {},
  ) => ctx.request(method, `${API}${path}`, { token: tenant.token, ...options });

  /** A tool call that must succeed; its structuredContent. */
  const ok = (name: string, args: Record<string, unknown>, client = mcp) => client.succeeds(name, args);
  /** A tool call that must fail with `code`; its §2 body. */
  const fails = (code: string, name: string, args: Record<string, unknown>, client = mcp) =>
    client.fails(code, name, args);

  before(async () => {
    url = await mcpUrl(ctx.app);
    tenant = await ctx.tenant('MCP tenant');
    other = await ctx.tenant('Neighbour');
    mcp = await McpTestClient.connect(url, tenant.token);
    english = await McpTestClient.connect(url, tenant.token, { 'accept-language': 'en-US,en;q=0.9' });
  });
  after(async () => {
    await mcp?.close();
    await english?.close();
  });

  test('create_lead, get_lead, update_lead, set_lead_status: what REST shows of the same lead, with its ETag', async () => {
    const created = await ok('create_lead', {
      name: '  Ana Souza ',
      email: 'ANA@Example.com',
      source: 'website',
      score: 40,
    });
    const id = created.lead._id;
    let view = await rest('GET', `/leads/${id}`);
    assert.deepEqual(created.lead, view.body);
    assert.equal(created.etag, view.headers.etag);
    assert.equal(created.lead.name, 'Ana Souza');
    assert.equal(created.lead.email, 'ana@example.com');
    assert.equal(created.lead.createdBy, tenant.tokenId);

    assert.deepEqual(await ok('get_lead', { id }), { lead: view.body, etag: view.headers.etag });

    const updated = await ok('update_lead', {
      id,
      fields: { score: 75, notes: 'Asked for a demo' },
      etag: created.etag,
    });
    view = await rest('GET', `/leads/${id}`);
    assert.deepEqual(updated, { lead: view.body, etag: view.headers.etag });
    assert.equal(view.body.score, 75);
    assert.notEqual(updated.etag, created.etag);

    // The version without its quotes is understood too: a model may well drop them.
    const moved = await ok('set_lead_status', {
      id,
      status: 'contacted',
      etag: String(updated.etag).replaceAll('"', ''),
    });
    view = await rest('GET', `/leads/${id}`);
    assert.deepEqual(moved, { lead: view.body, etag: view.headers.etag });
    assert.equal(view.body.status, 'contacted');

    // Each write is the REST write: its event, by this token, in this request.
    await feedSettled(ctx.db, tenant.id);
    const events = (await rest('GET', '/events', { query: { objectId: id } })).body;
    assert.deepEqual(
      events.map((event: { type: string }) => event.type),
      ['lead.created', 'lead.updated', 'lead.status_changed'],
    );
    assert.deepEqual(events[1].data.changedFields, ['score', 'notes']);
    for (const event of events) assert.equal(event.actor.tokenId, tenant.tokenId);
  });

  test('search_leads: the page REST lists for the same filters, and paging by nextCursor', async () => {
    for (let i = 0; i < 5; i++) {
      await ok('create_lead', { name: `Pager ${i}`, phone: `+55 11 5555-000${i}`, source: 'paging', score: 10 * i });
    }
    const page = await ok('search_leads', { source: 'paging', scoreMin: 10, sort: '-score', limit: 3 });
    const listed = await rest('GET', '/leads', {
      query: { source: 'paging', scoreMin: '10', sort: '-score', limit: '3' },
    });
    assert.deepEqual(page.items, listed.body);
    assert.equal(typeof page.nextCursor, 'string');
    assert.equal(page.nextCursor, listed.headers['x-next-cursor']);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const args: Record<string, unknown> = { source: 'paging', sort: 'createdAt', limit: 2 };
      if (cursor) args.cursor = cursor;
      const result = await ok('search_leads', args);
      seen.push(...result.items.map((item: { name: string }) => item.name));
      cursor = result.nextCursor ?? undefined;
    } while (cursor);
    assert.deepEqual(seen, ['Pager 0', 'Pager 1', 'Pager 2', 'Pager 3', 'Pager 4']);

    // A cursor is bound to its filters, as on REST; a status outside the pipeline is named.
    await fails('validation_failed', 'search_leads', { source: 'other', cursor: page.nextCursor });
    const status = await fails('validation_failed', 'search_leads', { status: 'new,sold' });
    assert.equal(status.details[0].field, 'status');
    // Injection strings are text to match, nothing more.
    assert.deepEqual((await ok('search_leads', { q: "'; drop table leads; --" })).items, []);
    assert.equal((await rest('GET', '/leads', { query: { source: 'paging' } })).body.length, 5);
  });

  test('convert_lead: the customer REST shows, created once; lead_history: the events REST shows', async () => {
    const { lead } = await ok('create_lead', { name: 'Bruno Lima', email: 'bruno@example.com' });
    const converted = await ok('convert_lead', { id: lead._id, customer: { type: 'company', value: 1200.5 } });
    assert.equal(converted.created, true);
    assert.equal(converted.lead.status, 'won');
    assert.equal(converted.lead.customerId, converted.customer._id);
    assert.deepEqual(converted.customer, (await rest('GET', `/customers/${converted.customer._id}`)).body);
    assert.deepEqual(converted.lead, (await rest('GET', `/leads/${lead._id}`)).body);
    assert.equal(converted.customer.type, 'company');
    const again = await ok('convert_lead', { id: lead._id });
    assert.equal(again.created, false);
    assert.equal(again.customer._id, converted.customer._id);

    await feedSettled(ctx.db, tenant.id);
    const history = await ok('lead_history', { id: lead._id });
    const feed = await rest('GET', '/events', {
      query: { objectId: lead._id, types: 'lead.created,lead.updated,lead.status_changed,lead.converted,lead.deleted' },
    });
    assert.deepEqual(history.items, feed.body);
    assert.deepEqual(
      history.items.map((event: { type: string }) => event.type),
      ['lead.created', 'lead.converted'],
    );
    // Each change names the token that made it, and the request.
    for (const event of history.items) {
      assert.equal(event.actor.tokenId, tenant.tokenId);
      assert.equal(typeof event.requestId, 'string');
    }
    assert.equal(history.nextCursor, null);
    const first = await ok('lead_history', { id: lead._id, limit: 1 });
    assert.equal(first.items.length, 1);
    const rest2 = await ok('lead_history', { id: lead._id, cursor: first.nextCursor });
    assert.deepEqual([...first.items, ...rest2.items], history.items);
  });

  test('pipeline_summary: the numbers of GET /leads/summary', async () => {
    const query = { createdSince: '2020-01-01T00:00:00.000Z', createdUntil: '2020-12-31T00:00:00.000Z' };
    assert.deepEqual(await ok('pipeline_summary', query), (await rest('GET', '/leads/summary', { query })).body);
    const until = new Date(Date.now() + 60_000).toISOString();
    const recent = await ok('pipeline_summary', { source: 'paging', createdUntil: until });
    const summary = await rest('GET', '/leads/summary', { query: { source: 'paging', createdUntil: until } });
    assert.deepEqual(recent, summary.body);
    assert.equal(recent.total, 5);
    const refused = await fails('validation_failed', 'pipeline_summary', {
      createdSince: '2026-02-01T00:00:00Z',
      createdUntil: '2026-01-01T00:00:00Z',
    });
    assert.equal(refused.details[0].field, 'createdUntil');
  });

  test('the customer tools: what REST shows, and a taken e-mail is a conflict naming its holder', async () => {
    const created = await ok('create_customer', { name: 'Carla Dias', email: 'carla@example.com', custom: {} });
    const id = created.customer._id;
    let view = await rest('GET', `/customers/${id}`);
    assert.deepEqual(created, { customer: view.body, etag: view.headers.etag });
    assert.equal(created.customer.firstName, 'Carla');
    assert.deepEqual(await ok('get_customer', { id }), created);
    const updated = await ok('update_customer', { id, fields: { status: 'inactive', value: 99.9 } });
    view = await rest('GET', `/customers/${id}`);
    assert.deepEqual(updated, { customer: view.body, etag: view.headers.etag });
    const found = await ok('search_customers', { email: 'CARLA@example.com' });
    assert.deepEqual(found.items, [view.body]);
    assert.deepEqual(
      (await ok('search_customers', { status: 'inactive', type: 'individual' })).items,
      (await rest('GET', '/customers', { query: { status: 'inactive', type: 'individual', limit: '20' } })).body,
    );

    const taken = await fails('conflict', 'create_customer', { name: 'Other Carla', email: 'carla@example.com' });
    assert.equal(taken.existingId, id);
    const stale = await fails('precondition_failed', 'update_customer', {
      id,
      fields: { notes: 'x' },
      etag: created.etag,
    });
    assert.ok(stale.error);
    assert.equal((await rest('GET', `/customers/${id}`)).body.notes, null);
  });

  test('validation: the REST message and details, in pt-BR or English by Accept-Language', async () => {
    const pt = await fails('validation_failed', 'create_lead', { name: 'Sem contato' });
    assert.equal(pt.error, LEAD_MESSAGE);
    assert.deepEqual(
      pt.details.map((d: { field: string }) => d.field),
      ['email', 'phone'],
    );
    const en = await fails('validation_failed', 'create_lead', { name: 'No contact' }, english);
    assert.equal(en.error, LEAD_MESSAGE_EN);

    const { lead } = await ok('create_lead', { name: 'Dora', phone: '+55 21 99999-0000' });
    const nested = await fails(
      'validation_failed',
      'update_lead',
      { id: lead._id, fields: { email: 'not-an-email' } },
      english,
    );
    assert.equal(nested.details[0].field, 'fields.email');
    assert.match(nested.details[0].message, /e-mail/i);
    const unknown = await fails('validation_failed', 'update_lead', { id: lead._id, fields: { owner: 'me' } });
    assert.equal(unknown.details[0].field, 'fields.owner');
    const typed = await fails('validation_failed', 'set_lead_status', { id: lead._id, status: 'sold' });
    assert.equal(typed.details[0].field, 'status');
    const missing = await fails('validation_failed', 'get_lead', {});
    assert.equal(missing.details[0].field, 'id');
    const empty = await fails('validation_failed', 'update_customer', { id: UNKNOWN_ID, fields: {} }, english);
    assert.ok(empty.error);
    // Deep or long input is refused, by the schema or before it, and never stored or thrown on.
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 20; i++) deep = { deep };
    await fails('validation_failed', 'update_lead', { id: lead._id, fields: { custom: deep } });
    await fails('validation_failed', 'update_lead', { id: lead._id, fields: { custom: { tags: [[['x']]] } } });
    let deeper: unknown[] = [];
    for (let i = 0; i < 100; i++) deeper = [deeper];
    await assert.rejects(
      mcp.call('create_lead', { name: 'Deep', phone: '1', idempotencyKey: 'deep', custom: { tags: deeper } }),
      (error: Error & { code?: number }) => error.code === 400 && /validation_failed/.test(error.message),
    );
    await fails('validation_failed', 'search_leads', { q: 'x'.repeat(5000) });
    assert.deepEqual((await rest('GET', `/leads/${lead._id}`)).body, (await ok('get_lead', { id: lead._id })).lead);
  });

  test("not found: another tenant's record is as absent as an unknown one, and stays untouched", async () => {
    const theirs = await ctx.request('POST', `${API}/leads`, {
      token: other.token,
      body: { name: 'Their lead', email: 'their@example.com' },
    });
    const id = theirs.body._id;
    for (const [name, args] of [
      ['get_lead', { id }],
      ['update_lead', { id, fields: { name: 'Taken over' } }],
      ['set_lead_status', { id, status: 'lost' }],
      ['convert_lead', { id }],
      ['lead_history', { id }],
      ['get_lead', { id: UNKNOWN_ID }],
      ['get_customer', { id: UNKNOWN_ID }],
    ] as const) {
      const body = await fails('not_found', name, args, english);
      assert.match(body.error, /not found/, name);
    }
    const after = await ctx.request('GET', `${API}/leads/${id}`, { token: other.token });
    assert.deepEqual(after.body, theirs.body);
    assert.deepEqual((await ok('search_leads', { q: 'their@example.com' })).items, []);
  });

  test('precondition: a stale etag changes nothing; conversion needs an e-mail', async () => {
    const { lead, etag } = await ok('create_lead', { name: 'Eva', email: 'eva@example.com' });
    await ok('update_lead', { id: lead._id, fields: { score: 10 } });
    const stale = await fails(
      'precondition_failed',
      'update_lead',
      { id: lead._id, fields: { score: 99 }, etag },
      english,
    );
    assert.match(stale.error, /changed/);
    await fails('precondition_failed', 'set_lead_status', { id: lead._id, status: 'lost', etag });
    const now = (await rest('GET', `/leads/${lead._id}`)).body;
    assert.equal(now.score, 10);
    assert.equal(now.status, 'new');

    const phoneOnly = await ok('create_lead', { name: 'Fabio', phone: '+55 11 4000-0000' });
    const refused = await fails('validation_failed', 'convert_lead', { id: phoneOnly.lead._id });
    assert.equal(refused.details[0].field, 'email');
  });

  test('idempotencyKey: a retry answers the first result and creates nothing; other arguments are refused', async () => {
    const key = `mcp-create-${ctx.backend}`;
    const first = await mcp.call('create_lead', { name: 'Gil', email: 'gil@example.com', idempotencyKey: key });
    const retry = await mcp.call('create_lead', { name: 'Gil', email: 'gil@example.com', idempotencyKey: key });
    assert.equal(first.isError, false);
    assert.deepEqual(retry.body, first.body);
    assert.equal(retry.result._meta?.['funil/idempotentReplayed'], true);
    assert.equal(first.result._meta, undefined);
    assert.equal((await rest('GET', '/leads', { query: { email: 'gil@example.com' } })).body.length, 1);

    await fails('idempotency_key_reused', 'create_lead', {
      name: 'Gil 2',
      email: 'gil@example.com',
      idempotencyKey: key,
    });
    await fails('idempotency_key_reused', 'create_customer', {
      name: 'Gil',
      email: 'gil@example.com',
      idempotencyKey: key,
    });

    // A refused call (400) leaves its key free for the corrected one.
    const fresh = `mcp-corrected-${ctx.backend}`;
    await fails('validation_failed', 'create_lead', { name: 'Hana', idempotencyKey: fresh });
    const corrected = await ok('create_lead', { name: 'Hana', email: 'hana@example.com', idempotencyKey: fresh });
    assert.equal(corrected.lead.name, 'Hana');
    // A 404 is an outcome, kept like any other.
    const gone = `mcp-gone-${ctx.backend}`;
    await fails('not_found', 'set_lead_status', { id: UNKNOWN_ID, status: 'won', idempotencyKey: gone });
    const replayed = await mcp.call('set_lead_status', { id: UNKNOWN_ID, status: 'won', idempotencyKey: gone });
    assert.equal(replayed.body.code, 'not_found');
    assert.equal(replayed.result._meta?.['funil/idempotentReplayed'], true);
    const emptyKey = await fails(
      'validation_failed',
      'create_lead',
      { name: 'Ivo', email: 'ivo@example.com', idempotencyKey: '' },
      english,
    );
    assert.deepEqual(
      emptyKey.details.map((d: { field: string }) => d.field),
      ['idempotencyKey'],
    );
    assert.doesNotMatch(emptyKey.error, /Name is required/);
  });

  test('a token with one of the two scopes may not convert; existingId only to a token that may read customers', async () => {
    const { lead } = await ok('create_lead', { name: 'Kai', email: 'kai@example.com' });
    const leadsOnly = await ctx.token(tenant.id, ['leads:write', 'leads:read']);
    const writer = await McpTestClient.connect(url, leadsOnly.token, { 'accept-language': 'en' });
    const customerWriter = await ctx.token(tenant.id, ['customers:write']);
    const blind = await McpTestClient.connect(url, customerWriter.token);
    try {
      const refused = await fails('forbidden', 'convert_lead', { id: lead._id }, writer);
      assert.match(refused.error, /customers:write/);
      assert.equal((await rest('GET', `/leads/${lead._id}`)).body.customerId, null);

      const { customer } = await ok('create_customer', { name: 'Kai', email: 'kai.c@example.com' }, blind);
      const taken = await fails('conflict', 'create_customer', { name: 'Kai 2', email: 'kai.c@example.com' }, blind);
      assert.equal(taken.existingId, undefined);
      const named = await fails('conflict', 'create_customer', { name: 'Kai 2', email: 'kai.c@example.com' });
      assert.equal(named.existingId, customer._id);
      await feedSettled(ctx.db, tenant.id);
      const events = (await rest('GET', '/events', { query: { objectId: customer._id } })).body;
      assert.deepEqual(
        events.map((event: { type: string; actor: { tokenId: string } }) => [event.type, event.actor.tokenId]),
        [['customer.created', customerWriter.id]],
      );
    } finally {
      await writer.close();
      await blind.close();
    }
  });

  test('ids are UUIDs as PostgreSQL reads them: a urn:uuid: id is refused, never a 500', async () => {
    const urn = `urn:uuid:${UNKNOWN_ID}`;
    for (const name of ['get_lead', 'lead_history', 'get_customer']) {
      const refused = await fails('validation_failed', name, { id: urn });
      assert.equal(refused.details[0].field, 'id');
    }
    const feed = await rest('GET', '/events', { query: { objectId: urn } });
    assert.equal(feed.status, 400);
    assert.equal(feed.body.code, 'validation_failed');
  });

  test("custom fields travel through the tools as through REST, checked against the tenant's definitions", async () => {
    await define(ctx, tenant, fieldBody('budget', { type: 'number' }));
    const created = await ok('create_lead', { name: 'Jo', email: 'jo@example.com', custom: { budget: 5000 } });
    assert.deepEqual(created.lead.custom, { budget: 5000 });
    const refused = await fails('validation_failed', 'update_lead', {
      id: created.lead._id,
      fields: { custom: { budget: 'lots' } },
    });
    assert.equal(refused.details[0].field, 'custom.budget');
    assert.deepEqual((await rest('GET', `/leads/${created.lead._id}`)).body.custom, { budget: 5000 });
  });

  test('every tool answered both a success and an error, each checked against its outputSchema', async () => {
    // The failures the tests above had no reason to meet.
    await fails('validation_failed', 'search_customers', { status: 'gone' });
    await fails('validation_failed', 'lead_history', { id: UNKNOWN_ID, limit: 101 });
    await ok('list_pipelines', {});
    await fails('validation_failed', 'list_pipelines', { name: 'Inbound' });
    for (const name of TOOLS) {
      assert.deepEqual([...(toolCoverage.get(name) ?? [])].sort(), ['error', 'success'], name);
    }
  });
});
