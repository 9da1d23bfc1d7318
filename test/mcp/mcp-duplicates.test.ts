import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createDuplicateLeads, DUPLICATE_GROUPS } from '../duplicates/duplicate-fixtures.js';
import { feedSettled } from '../helpers/feed.js';
import { McpTestClient, mcpUrl, toolCoverage } from '../helpers/mcp-client.js';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { UNKNOWN_ID } from '../leads/lead-fixtures.js';

type Lead = Record<string, unknown> & { _id: string };

describeEachBackend('MCP find_duplicates and merge_leads: SPEC §21 through an assistant', (ctx) => {
  /** The tenant whose duplicates are listed; merges happen in `merging`, so that they never change the groups. */
  let finding: TestTenant;
  let merging: TestTenant;
  let other: TestTenant;
  let url: URL;
  const clients: McpTestClient[] = [];
  let ids: Record<string, string>;

  const connect = async (token: string) => {
    const client = await McpTestClient.connect(url, token, { 'accept-language': 'en' });
    clients.push(client);
    return client;
  };
  const lead = async (tenant: TestTenant, body: Record<string, unknown>): Promise<Lead> => {
    const res = await ctx.api(tenant, 'POST', '/leads', { body });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  /** The lead as REST reads it now; undefined when it is gone (404). */
  const read = async (tenant: TestTenant, id: string): Promise<Lead | undefined> => {
    const res = await ctx.api(tenant, 'GET', `/leads/${id}`);
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const eventTypes = async (tenant: TestTenant, id: string): Promise<string[]> => {
    await feedSettled(ctx.db, tenant.id);
    const res = await ctx.api(tenant, 'GET', '/events', { query: { objectId: id } });
    return res.body.map((event: { type: string }) => event.type);
  };

  before(async () => {
    url = await mcpUrl(ctx.app);
    finding = await ctx.tenant('Finding');
    merging = await ctx.tenant('Merging');
    other = await ctx.tenant('Neighbour');
    ids = await createDuplicateLeads(ctx, finding.token);
    // Another tenant's lead with the same e-mail never groups with these.
    ids.theirs = (await lead(other, { name: 'theirs', email: 'ana@x.com' }))._id;
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  test('find_duplicates: the groups GET /leads/duplicates lists, paged by nextCursor, a cursor good on either side', async () => {
    const mcp = await connect(finding.token);
    const all = await mcp.succeeds('find_duplicates', {});
    const listed = await ctx.api(finding, 'GET', '/leads/duplicates');
    assert.deepEqual(all.items, listed.body);
    assert.equal(all.nextCursor, null);
    assert.deepEqual(
      all.items.map((group: { key: object; count: number }) => [group.key, group.count]),
      DUPLICATE_GROUPS,
    );
    assert.deepEqual(new Set(all.items[0].ids), new Set([ids.ana1, ids.ana2, ids.ana3]));

    // Two pages of one group: REST's pages, with REST's cursor.
    const first = await mcp.succeeds('find_duplicates', { limit: 1 });
    const restFirst = await ctx.api(finding, 'GET', '/leads/duplicates', { query: { limit: '1' } });
    assert.deepEqual(first.items, restFirst.body);
    assert.equal(typeof first.nextCursor, 'string');
    assert.equal(first.nextCursor, restFirst.headers['x-next-cursor']);
    const second = await mcp.succeeds('find_duplicates', { limit: 1, cursor: first.nextCursor });
    const restSecond = await ctx.api(finding, 'GET', '/leads/duplicates', {
      query: { limit: '1', cursor: String(restFirst.headers['x-next-cursor']) },
    });
    assert.deepEqual(second.items, restSecond.body);
    assert.deepEqual(second.items, [all.items[1]]);
    assert.equal(second.nextCursor, restSecond.headers['x-next-cursor']);
    // The last page says so.
    const third = await mcp.succeeds('find_duplicates', { limit: 1, cursor: second.nextCursor });
    assert.deepEqual(third.items, [all.items[2]]);
    assert.equal(third.nextCursor, null);

    const phones = await mcp.succeeds('find_duplicates', { kind: 'phone' });
    assert.deepEqual(
      phones.items,
      (await ctx.api(finding, 'GET', '/leads/duplicates', { query: { kind: 'phone' } })).body,
    );
    assert.equal(phones.items.length, 1);

    // A cursor is bound to its kind and its tenant, as on REST; a call reads at most 100 groups.
    const bound = await mcp.fails('validation_failed', 'find_duplicates', { kind: 'email', cursor: first.nextCursor });
    assert.equal(bound.details[0].field, 'cursor');
    const neighbour = await connect(other.token);
    await neighbour.fails('validation_failed', 'find_duplicates', { limit: 1, cursor: first.nextCursor });
    assert.deepEqual((await neighbour.succeeds('find_duplicates', {})).items, []);
    for (const limit of [0, 101]) {
      const refused = await mcp.fails('validation_failed', 'find_duplicates', { limit });
      assert.equal(refused.details[0].field, 'limit');
    }
  });

  test('find_duplicates with id: the leads GET /leads/:id/duplicates lists, whole, with the keys they share', async () => {
    const mcp = await connect(finding.token);
    const found = await mcp.succeeds('find_duplicates', { id: ids.ana3 });
    const listed = await ctx.api(finding, 'GET', `/leads/${ids.ana3}/duplicates`);
    assert.deepEqual(found, { items: listed.body });
    const matched = new Map(
      found.items.map((match: { record: Lead; matchedOn: string[] }) => [match.record._id, match.matchedOn]),
    );
    assert.deepEqual(
      matched,
      new Map([
        [ids.ana1, ['email']],
        [ids.ana2, ['email']],
        [ids.phone1, ['phone']],
      ]),
    );
    const ana1 = found.items.find((match: { record: Lead }) => match.record._id === ids.ana1);
    assert.deepEqual(ana1.record, await read(finding, ids.ana1 as string));
    assert.deepEqual(await mcp.succeeds('find_duplicates', { id: ids.alone }), { items: [] });

    // Paging belongs to the groups: with id it is refused, named.
    const stray = await mcp.fails('validation_failed', 'find_duplicates', { id: ids.ana3, limit: 5 });
    assert.equal(stray.details[0].field, 'limit');
    // Another tenant's lead is as absent as an unknown one.
    for (const id of [ids.theirs, UNKNOWN_ID]) {
      const missing = await mcp.fails('not_found', 'find_duplicates', { id });
      assert.match(missing.error, /not found/);
    }
  });

  test('scopes: find_duplicates needs leads:read; merge_leads leads:read and leads:write, else forbidden', async () => {
    const target = await lead(merging, { name: 'Scoped', email: 'scoped@x.com' });
    const source = await lead(merging, { name: 'Scoped 2', email: 'scoped@x.com' });
    const args = { targetId: target._id, sourceIds: [source._id] };
    const cases: [string[], string[], string][] = [
      [['leads:write'], [], 'leads:read'],
      [['leads:read'], ['find_duplicates'], 'leads:write'],
      [['leads:read', 'leads:write'], ['find_duplicates', 'merge_leads'], ''],
    ];
    for (const [scopes, shown, lacking] of cases) {
      const issued = await ctx.token(merging.id, scopes as never);
      const mcp = await connect(issued.token);
      const names = mcp.toolNames().filter((name) => name === 'find_duplicates' || name === 'merge_leads');
      assert.deepEqual(names, shown, scopes.join(' '));
      if (!lacking) continue;
      const refused = await mcp.fails('forbidden', 'merge_leads', args);
      assert.match(refused.error, new RegExp(lacking), scopes.join(' '));
      if (!shown.includes('find_duplicates')) await mcp.fails('forbidden', 'find_duplicates', {});
    }
    assert.deepEqual(await read(merging, source._id), source, 'a refused merge deletes nothing');
    assert.deepEqual(await read(merging, target._id), target);

    const mcp = await connect(merging.token);
    const byName = new Map(mcp.tools.map((tool) => [tool.name, tool]));
    const merge = byName.get('merge_leads');
    assert.deepEqual(merge?.annotations, {
      title: merge?.title,
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    });
    assert.ok(merge?.inputSchema.properties?.idempotencyKey);
    assert.match(merge?.description ?? '', /dryRun: true/);
    assert.match(merge?.description ?? '', /POST \/merges\/\{merge\.id\}\/undo/);
    assert.match(merge?.description ?? '', /DELETED/);
    const find = byName.get('find_duplicates');
    assert.equal(find?.annotations?.readOnlyHint, true);
    assert.equal(find?.inputSchema.properties?.idempotencyKey, undefined);
  });

  test('merge_leads with dryRun: the lead the merge would make, and nothing written', async () => {
    const mcp = await connect(merging.token);
    const target = await lead(merging, { name: 'Dry target', email: 'dry@x.com', score: 10 });
    const source = await lead(merging, { name: 'Dry source', email: 'dry@x.com', phone: '+55 21 3333-0000' });
    const answer = await mcp.succeeds('merge_leads', {
      targetId: target._id,
      sourceIds: [source._id],
      fields: { name: source._id },
      dryRun: true,
    });
    assert.deepEqual(answer.merge, { id: null, targetId: target._id, sourceIds: [source._id], createdAt: null });
    assert.equal(answer.record._id, target._id);
    assert.equal(answer.record.name, 'Dry source', 'chosen by fields');
    assert.equal(answer.record.phone, '+55 21 3333-0000', "the source's, where the target has none");
    assert.equal(answer.record.score, 10, "the target's own");

    assert.deepEqual(await read(merging, source._id), source, 'the source is still there');
    assert.deepEqual(await read(merging, target._id), target, 'the target unchanged');
    assert.deepEqual(await eventTypes(merging, target._id), ['lead.created']);
    assert.deepEqual(await eventTypes(merging, source._id), ['lead.created']);
  });

  test('merge_leads: the REST merge, sources deleted, the record answered; undone by REST', async () => {
    const mcp = await connect(merging.token);
    const target = await lead(merging, { name: 'Real target', email: 'real@x.com' });
    const older = await lead(merging, { name: 'Real older', email: 'real@x.com', notes: 'met at the fair' });
    const newer = await lead(merging, { name: 'Real newer', phone: '+55 31 4444-0000', source: 'ads' });
    const answer = await mcp.succeeds('merge_leads', {
      targetId: target._id,
      sourceIds: [older._id, newer._id],
      fields: { source: newer._id },
    });
    const now = await read(merging, target._id);
    assert.deepEqual(answer.record, now);
    assert.equal(now?.name, 'Real target');
    assert.equal(now?.notes, 'met at the fair');
    assert.equal(now?.phone, '+55 31 4444-0000');
    assert.equal(now?.source, 'ads');
    assert.match(answer.merge.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(answer.merge.sourceIds, [older._id, newer._id]);
    assert.equal(answer.merge.targetId, target._id);
    assert.equal(await read(merging, older._id), undefined);
    assert.equal(await read(merging, newer._id), undefined);

    // The REST write: its events, naming this token.
    assert.deepEqual(await eventTypes(merging, older._id), ['lead.created', 'lead.deleted']);
    await feedSettled(ctx.db, merging.id);
    const events = (await ctx.api(merging, 'GET', '/events', { query: { objectId: target._id } })).body;
    const merged = events.at(-1);
    assert.equal(merged.type, 'lead.merged');
    assert.deepEqual(merged.data.mergedIds, [older._id, newer._id]);
    assert.equal(merged.actor.tokenId, merging.tokenId);

    // As the description says: POST /merges/{merge.id}/undo puts the sources back.
    const undone = await ctx.api(merging, 'POST', `/merges/${answer.merge.id}/undo`);
    assert.equal(undone.status, 200, undone.text);
    assert.equal((await read(merging, older._id))?.notes, 'met at the fair');
    assert.equal((await read(merging, newer._id))?.source, 'ads');

    // Merging them again: sources gone by then are not found, a source that is the target is refused.
    const again = await mcp.fails('validation_failed', 'merge_leads', {
      targetId: target._id,
      sourceIds: [target._id],
    });
    assert.equal(again.details[0].field, 'sourceIds');
    const unknownField = await mcp.fails('validation_failed', 'merge_leads', {
      targetId: target._id,
      sourceIds: [older._id],
      fields: { owner: older._id },
    });
    assert.equal(unknownField.details[0].field, 'fields.owner');
  });

  test('merge_leads with an idempotencyKey: a retry answers the first merge, and merges once', async () => {
    const mcp = await connect(merging.token);
    const target = await lead(merging, { name: 'Once', email: 'once@x.com' });
    const source = await lead(merging, { name: 'Once 2', email: 'once@x.com' });
    const args = { targetId: target._id, sourceIds: [source._id], idempotencyKey: `merge-once-${ctx.backend}` };
    const first = await mcp.call('merge_leads', args);
    assert.equal(first.isError, false, JSON.stringify(first.body));
    assert.equal(first.result._meta, undefined);
    const retry = await mcp.call('merge_leads', args);
    assert.equal(retry.isError, false, 'without the key, a second merge would find the source gone');
    assert.deepEqual(retry.body, first.body);
    assert.equal(retry.result._meta?.['funil/idempotentReplayed'], true);
    const types = await eventTypes(merging, target._id);
    assert.deepEqual(types, ['lead.created', 'lead.merged'], 'merged once');
    // Without the key, the same call finds the source gone.
    await mcp.fails('not_found', 'merge_leads', { targetId: target._id, sourceIds: [source._id] });
  });

  test('merge_leads with an etag: a stale one is precondition_failed and merges nothing; the current one merges', async () => {
    const mcp = await connect(merging.token);
    const target = await lead(merging, { name: 'Etag', email: 'etag@x.com' });
    const source = await lead(merging, { name: 'Etag 2', email: 'etag@x.com' });
    const { etag } = await mcp.succeeds('get_lead', { id: target._id });
    const changed = await mcp.succeeds('update_lead', { id: target._id, fields: { score: 50 } });
    const args = { targetId: target._id, sourceIds: [source._id] };
    const stale = await mcp.fails('precondition_failed', 'merge_leads', { ...args, etag });
    assert.ok(stale.error);
    assert.deepEqual(await read(merging, source._id), source);
    assert.deepEqual(await read(merging, target._id), changed.lead);

    // The version without its quotes, as a model may send it.
    const merged = await mcp.succeeds('merge_leads', { ...args, etag: String(changed.etag).replaceAll('"', '') });
    assert.equal(merged.record.score, 50);
    assert.equal(await read(merging, source._id), undefined);
  });

  test("merge_leads: another tenant's lead, or an unknown one, is not found, and nothing changes", async () => {
    const mcp = await connect(merging.token);
    const target = await lead(merging, { name: 'Walled', email: 'walled@x.com' });
    const mine = await lead(merging, { name: 'Walled 2', email: 'walled@x.com' });
    const theirs = await lead(other, { name: 'Theirs', email: 'walled@x.com' });
    for (const sourceIds of [[theirs._id], [mine._id, theirs._id], [UNKNOWN_ID]]) {
      const missing = await mcp.fails('not_found', 'merge_leads', { targetId: target._id, sourceIds });
      assert.match(missing.error, /not found/);
    }
    await mcp.fails('not_found', 'merge_leads', { targetId: theirs._id, sourceIds: [mine._id] });
    assert.deepEqual(await read(other, theirs._id), theirs);
    assert.deepEqual(await read(merging, mine._id), mine);
    assert.deepEqual(await read(merging, target._id), target);
  });

  test('both tools answered a success and an error, each checked against its outputSchema', () => {
    for (const name of ['find_duplicates', 'merge_leads']) {
      assert.deepEqual([...(toolCoverage.get(name) ?? [])].sort(), ['error', 'success'], name);
    }
  });
});
