import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { assertError, assertForbidden, assertInvalidField } from '../helpers/assert-error.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { uniqueEmail } from '../helpers/unique.js';
import { waitFor } from '../helpers/wait-for.js';

type Json = Record<string, unknown> & { _id: string };

describeEachBackend('merge and undo (SPEC §21)', (ctx) => {
  let tenant: TestTenant;
  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
    token = tenant.token,
    headers = {},
  ) => ctx.request(method, `${API}${path}`, { token, body, headers });
  const lead = async (body: Record<string, unknown>, token = tenant.token): Promise<Json> => {
    const res = await call('POST', '/leads', { name: 'Lead', ...body }, token);
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const read = async (path: string) => (await call('GET', path)).body;
  /** A record's history once `done` says it holds what the test waits for (the feed shows an event once no earlier one can still commit). */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  type Event = any;
  const historyOf = (id: string, done: (events: Event[]) => boolean) =>
    waitFor(async () => {
      const events = (await read(`/events?objectId=${id}`)) as Event[];
      return done(events) ? events : undefined;
    });
  const lastIs = (type: string) => (events: Event[]) => events.at(-1)?.type === type;

  before(async () => {
    tenant = await ctx.tenant();
    const defined = await call('POST', '/fields', { resource: 'lead', key: 'plan', label: 'Plan', type: 'text' });
    assert.equal(defined.status, 201, defined.text);
    await call('POST', '/fields', { resource: 'lead', key: 'seats', label: 'Seats', type: 'integer' });
  });

  it("keeps the target's values, fills its blanks from the newest source, takes what `fields` chooses", async () => {
    const target = await lead({ email: 'ana@x.com', phone: null, source: null, score: 10, custom: { plan: 'pro' } });
    const older = await lead({ phone: '(11) 98765-4321', source: 'ads', notes: 'old', custom: { seats: 3 } });
    const newer = await lead({ phone: '(11) 91234-5678', source: 'form', score: 90, externalId: 'crm-1' });
    const answer = await call('POST', '/leads/merge', {
      targetId: target._id,
      sourceIds: [older._id, newer._id],
      fields: { score: newer._id, 'custom.seats': older._id },
    });
    assert.equal(answer.status, 200, answer.text);
    const merged = answer.body.record;
    assert.equal(merged._id, target._id);
    assert.equal(merged.email, 'ana@x.com', "the target's own");
    assert.equal(merged.phone, '(11) 91234-5678', "the newest source's");
    assert.equal(merged.source, 'form');
    assert.equal(merged.notes, 'old', 'the only one that has it');
    assert.equal(merged.score, 90, 'chosen');
    assert.equal(merged.externalId, 'crm-1', 'a unique key moves from its source');
    assert.deepEqual(merged.custom, { plan: 'pro', seats: 3 });
    assert.equal(answer.headers.etag, (await call('GET', `/leads/${target._id}`)).headers.etag);
    assert.deepEqual(answer.body.merge.sourceIds, [older._id, newer._id]);
    assertError(await call('GET', `/leads/${older._id}`), 404, 'not_found');
    // The events: a *.deleted per source (reason merge, mergedInto), then *.merged on the target.
    const olderEvents = await historyOf(older._id, lastIs('lead.deleted'));
    assert.deepEqual(
      { type: olderEvents.at(-1).type, reason: olderEvents.at(-1).reason, into: olderEvents.at(-1).mergedInto },
      { type: 'lead.deleted', reason: 'merge', into: target._id },
    );
    const targetEvents = await historyOf(target._id, lastIs('lead.merged'));
    const mergedEvent = targetEvents.at(-1);
    assert.equal(mergedEvent.type, 'lead.merged');
    assert.deepEqual(mergedEvent.data.mergedIds, [older._id, newer._id]);
    assert.equal(mergedEvent.data.previous.score, 10);
  });

  it('takes a lead’s pipeline and status together, from one record', async () => {
    const clinic = await call('POST', '/pipelines', {
      name: 'Clinic',
      stages: [
        { key: 'scheduled', label: 'Scheduled', kind: 'open' },
        { key: 'attended', label: 'Attended', kind: 'open' },
      ],
    });
    const target = await lead({ phone: '1', status: 'qualified' });
    const source = await lead({ phone: '2', pipeline: clinic.body.id, status: 'attended' });
    const answer = await call('POST', '/leads/merge', {
      targetId: target._id,
      sourceIds: [source._id],
      fields: { status: source._id },
    });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual([answer.body.record.pipeline, answer.body.record.status], [clinic.body.id, 'attended']);
  });

  it('puts a source back in a stage that still exists: a pipeline deleted or a stage removed since blocks, ?force=true places it', async () => {
    const stages = (...keys: string[]) => keys.map((key) => ({ key, label: key, kind: 'open' }));
    const pipeline = async (name: string, ...keys: string[]) => {
      const res = await call('POST', '/pipelines', { name, stages: stages(...keys) });
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    const undoOf = async (sourceBody: Record<string, unknown>) => {
      const target = await lead({ phone: '1' });
      const source = await lead({ phone: '2', ...sourceBody });
      const merged = await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [source._id] });
      assert.equal(merged.status, 200, merged.text);
      return { source, undo: `/merges/${merged.body.merge.id}/undo` };
    };
    const blockersOf = (res: { body: { blockers: { recordId: string; field: string; reason: string }[] } }) =>
      res.body.blockers.map((blocker) => [blocker.recordId, blocker.field, blocker.reason]);

    const gone = await pipeline('Gone', 'alpha', 'beta');
    const first = await undoOf({ pipeline: gone, status: 'beta' });
    assert.equal((await call('DELETE', `/pipelines/${gone}`)).status, 200, 'it holds no lead once merged');
    const refused = await call('POST', first.undo);
    assert.equal(refused.status, 409, refused.text);
    assert.deepEqual(blockersOf(refused), [[first.source._id, 'pipeline', 'pipeline_deleted']]);
    assert.equal((await call('POST', `${first.undo}?force=true`)).status, 200);
    const placed = await read(`/leads/${first.source._id}`);
    assert.deepEqual([placed.pipeline, placed.status], [tenant.id, 'new'], "the default pipeline's first stage");

    const trimmed = await pipeline('Trimmed', 'one', 'two');
    const second = await undoOf({ pipeline: trimmed, status: 'two' });
    const put = await call('PUT', `/pipelines/${trimmed}`, { stages: stages('one') });
    assert.equal(put.status, 200, put.text);
    const blocked = await call('POST', second.undo);
    assert.equal(blocked.status, 409, blocked.text);
    assert.deepEqual(blockersOf(blocked), [[second.source._id, 'status', 'stage_removed']]);
    assert.equal((await call('POST', `${second.undo}?force=true`)).status, 200);
    const back = await read(`/leads/${second.source._id}`);
    assert.deepEqual([back.pipeline, back.status], [trimmed, 'one'], 'its own pipeline, first stage');
    const summary = await read(`/leads/summary?pipeline=${trimmed}`);
    assert.ok(!JSON.stringify(summary).includes('"two"'), 'no lead in the removed stage');
  });

  it('writes nothing on a dry run, and answers what the merge would make', async () => {
    const target = await lead({ email: uniqueEmail('dry') });
    const source = await lead({ phone: '(11) 98765-4321', notes: 'kept?' });
    const eventsBefore = (await historyOf(target._id, lastIs('lead.created'))).length;
    const dry = await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [source._id], dryRun: true });
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.body.merge.id, null);
    assert.equal(dry.body.record.notes, 'kept?');
    assert.equal((await read(`/leads/${target._id}`)).notes, null);
    assert.equal((await call('GET', `/leads/${source._id}`)).status, 200);
    assert.equal((await read(`/events?objectId=${target._id}`)).length, eventsBefore);
  });

  it('undoes a merge: every record as it was, but for updatedAt and the ETag; at most once', async () => {
    const target = await lead({ email: uniqueEmail('t'), score: 5, custom: { plan: 'basic' } });
    const a = await lead({
      email: uniqueEmail('a'),
      phone: '(11) 98765-4321',
      externalId: 'ext-a',
      custom: { seats: 2 },
    });
    const b = await lead({ phone: '(21) 99876-5432', source: 'event', notes: 'b' });
    const before = await Promise.all([target, a, b].map((record) => read(`/leads/${record._id}`)));
    const merged = await call('POST', '/leads/merge', {
      targetId: target._id,
      sourceIds: [a._id, b._id],
      fields: { phone: a._id, email: a._id },
    });
    assert.equal(merged.status, 200, merged.text);
    const undone = await call('POST', `/merges/${merged.body.merge.id}/undo`);
    assert.equal(undone.status, 200, undone.text);
    assert.deepEqual(undone.body.restoredIds, [a._id, b._id]);
    const after = await Promise.all([target, a, b].map((record) => read(`/leads/${record._id}`)));
    const stable = (record: Json) => ({ ...record, updatedAt: null });
    assert.deepEqual(after.map(stable), before.map(stable));
    const restoredEvents = await historyOf(a._id, (events) => events.at(-1)?.reason === 'unmerge');
    assert.deepEqual([restoredEvents.at(-1).type, restoredEvents.at(-1).reason], ['lead.created', 'unmerge']);
    const targetEvents = await historyOf(target._id, (events) => events.at(-1)?.reason === 'unmerge');
    assert.equal(targetEvents.at(-1)?.reason, 'unmerge');
    assertError(await call('POST', `/merges/${merged.body.merge.id}/undo`), 409, 'conflict');
  });

  it('refuses an undo that would lose later changes, naming them; ?force=true keeps them', async () => {
    const target = await lead({ phone: '1', score: 1 });
    const source = await lead({ phone: '2', score: 70, externalId: 'ext-force' });
    const merged = await call('POST', '/leads/merge', {
      targetId: target._id,
      sourceIds: [source._id],
      fields: { score: source._id },
    });
    // Since: the target's score changed, and another lead took the source's externalId.
    await call('PUT', `/leads/${target._id}`, { score: 99, externalId: null });
    const taker = await lead({ phone: '3', externalId: 'ext-force' });
    const refused = await call('POST', `/merges/${merged.body.merge.id}/undo`);
    assert.equal(refused.status, 409, refused.text);
    assert.deepEqual(
      refused.body.blockers.map((blocker: { field: string; reason: string }) => [blocker.field, blocker.reason]).sort(),
      [
        ['externalId', 'changed_since'],
        ['externalId', 'taken'],
        ['score', 'changed_since'],
      ],
    );
    const forced = await call('POST', `/merges/${merged.body.merge.id}/undo?force=true`);
    assert.equal(forced.status, 200, forced.text);
    assert.equal((await read(`/leads/${target._id}`)).score, 99, 'the later value kept');
    const back = await read(`/leads/${source._id}`);
    assert.equal(back.externalId, null, 'taken since: the source comes back without it');
    assert.equal((await read(`/leads/${taker._id}`)).externalId, 'ext-force');
  });

  it('names a unique value the target gave up in the merge, taken since: 409, or kept by the target with ?force=true', async () => {
    const target = await lead({ phone: '1', externalId: 'ext-given-up' });
    const source = await lead({ phone: '2', externalId: 'ext-taken-over' });
    const merged = await call('POST', '/leads/merge', {
      targetId: target._id,
      sourceIds: [source._id],
      fields: { externalId: source._id },
    });
    assert.equal(merged.status, 200, merged.text);
    const taker = await lead({ phone: '3', externalId: 'ext-given-up' });
    const refused = await call('POST', `/merges/${merged.body.merge.id}/undo`);
    assert.equal(refused.status, 409, refused.text);
    assert.deepEqual(
      refused.body.blockers.map((blocker: { recordId: string; field: string; reason: string }) => [
        blocker.recordId,
        blocker.field,
        blocker.reason,
      ]),
      [
        [target._id, 'externalId', 'taken'],
        [source._id, 'externalId', 'taken'],
      ],
    );
    const forced = await call('POST', `/merges/${merged.body.merge.id}/undo?force=true`);
    assert.equal(forced.status, 200, forced.text);
    assert.equal((await read(`/leads/${target._id}`)).externalId, 'ext-taken-over', 'the target keeps what it has');
    assert.equal((await read(`/leads/${source._id}`)).externalId, null, 'the source comes back without it');
    assert.equal((await read(`/leads/${taker._id}`)).externalId, 'ext-given-up');

    // A customer cannot be without its e-mail: forced or not, such an undo is a 409, never a 500.
    const customer = async (email: string) => {
      const res = await call('POST', '/customers', { name: 'Customer', email });
      assert.equal(res.status, 201, res.text);
      return res.body as Json;
    };
    const [first, second] = [uniqueEmail(), uniqueEmail()];
    const c1 = await customer(first);
    const c2 = await customer(second);
    const mergedCustomers = await call('POST', '/customers/merge', {
      targetId: c1._id,
      sourceIds: [c2._id],
      fields: { email: c2._id },
    });
    assert.equal(mergedCustomers.status, 200, mergedCustomers.text);
    await customer(first);
    for (const force of ['', '?force=true']) {
      const undo = await call('POST', `/merges/${mergedCustomers.body.merge.id}/undo${force}`);
      assert.equal(undo.status, 409, undo.text);
      assert.deepEqual(
        undo.body.blockers.map((blocker: { recordId: string; reason: string }) => [blocker.recordId, blocker.reason]),
        [
          [c1._id, 'taken'],
          [c2._id, 'taken'],
        ],
      );
    }
    assert.equal((await read(`/customers/${c1._id}`)).email, second, 'nothing undone');
  });

  it('checks the body, other tenants’ ids, If-Match and the scopes', async () => {
    const target = await lead({ phone: '1' });
    const source = await lead({ phone: '2' });
    assertInvalidField(await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [] }), 'sourceIds');
    assertInvalidField(
      await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [target._id] }),
      'sourceIds',
    );
    assertInvalidField(
      await call('POST', '/leads/merge', {
        targetId: target._id,
        sourceIds: [source._id],
        fields: { tenant: source._id },
      }),
      'fields.tenant',
    );
    assertInvalidField(
      await call('POST', '/leads/merge', {
        targetId: target._id,
        sourceIds: [source._id],
        fields: { phone: target.tenant },
      }),
      'fields.phone',
    );
    const other = await ctx.tenant();
    const theirs = await lead({ phone: '9' }, other.token);
    assertError(
      await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [theirs._id] }),
      404,
      'not_found',
    );
    assert.equal((await read(`/leads/${target._id}`))._id, target._id, 'nothing written');
    assertError(
      await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [source._id] }, tenant.token, {
        'if-match': '"999"',
      }),
      412,
      'precondition_failed',
    );
    const writeOnly = (await ctx.token(tenant.id, ['leads:write'])).token;
    assertForbidden(await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [source._id] }, writeOnly));
    const readOnly = (await ctx.token(tenant.id, ['leads:read'])).token;
    assertForbidden(await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [source._id] }, readOnly));
    const merged = await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [source._id] });
    const customersOnly = (await ctx.token(tenant.id, ['customers:read', 'customers:write'])).token;
    assertForbidden(await call('POST', `/merges/${merged.body.merge.id}/undo`, undefined, customersOnly));
    assertError(await call('POST', `/merges/${merged.body.merge.id}/undo`, undefined, other.token), 404, 'not_found');
  });

  it('merges customers, a unique e-mail moving to the target', async () => {
    const target = (await call('POST', '/customers', { name: 'Eva Lima', email: uniqueEmail('eva') })).body;
    const source = (
      await call('POST', '/customers', { name: 'Eva', email: 'eva.work@x.com', phone: '+1 415 555 2671' })
    ).body;
    const merged = await call('POST', '/customers/merge', {
      targetId: target._id,
      sourceIds: [source._id],
      fields: { email: source._id },
    });
    assert.equal(merged.status, 200, merged.text);
    assert.equal(merged.body.record.email, 'eva.work@x.com');
    assert.equal(merged.body.record.phone, '+1 415 555 2671');
    assert.equal((await call('POST', `/merges/${merged.body.merge.id}/undo`)).status, 200);
    assert.equal((await read(`/customers/${source._id}`)).email, 'eva.work@x.com');
  });

  it('lets one of two concurrent merges of overlapping leads through; no record is lost', async () => {
    const [a, b, c] = [await lead({ phone: '1' }), await lead({ phone: '2' }), await lead({ phone: '3' })];
    const answers = await Promise.all([
      call('POST', '/leads/merge', { targetId: a._id, sourceIds: [b._id] }),
      call('POST', '/leads/merge', { targetId: c._id, sourceIds: [b._id] }),
    ]);
    const statuses = answers.map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [200, 404]);
    assert.equal((await call('GET', `/leads/${a._id}`)).status, 200);
    assert.equal((await call('GET', `/leads/${c._id}`)).status, 200);
  });

  it('merges once under one Idempotency-Key, the retry answered as the first', async () => {
    const target = await lead({ phone: '1' });
    const source = await lead({ phone: '2' });
    const body = { targetId: target._id, sourceIds: [source._id] };
    const headers = { 'idempotency-key': `merge-${target._id}` };
    const first = await call('POST', '/leads/merge', body, tenant.token, headers);
    const again = await call('POST', '/leads/merge', body, tenant.token, headers);
    assert.equal(first.status, 200, first.text);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body, first.body);
    const merged = (await historyOf(target._id, lastIs('lead.merged'))).filter(
      (e: { type: string }) => e.type === 'lead.merged',
    );
    assert.equal(merged.length, 1);
  });

  it('answers 410 to the undo of a merge older than the events kept', async () => {
    const target = await lead({ phone: '1' });
    const source = await lead({ phone: '2' });
    const merged = await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [source._id] });
    await sql`update merges set created_at = now() - interval '31 days' where id = ${merged.body.merge.id}`.execute(
      ctx.db,
    );
    assertError(await call('POST', `/merges/${merged.body.merge.id}/undo`), 410, 'merge_expired');
  });

  it("erases a person's merges with their data (SPEC §17)", async () => {
    const email = uniqueEmail('erased');
    const target = await lead({ email });
    const source = await lead({ phone: '5' });
    const merged = await call('POST', '/leads/merge', { targetId: target._id, sourceIds: [source._id] });
    const erased = await call('POST', '/personal-data/erase', { email });
    assert.equal(erased.status, 200, erased.text);
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from merges where id = ${merged.body.merge.id}`.execute(ctx.db);
    assert.equal(rows[0]?.n, 0);
  });
});
