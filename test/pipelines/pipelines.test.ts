import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { assertError, assertForbidden, assertInvalidField } from '../helpers/assert-error.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { uniqueEmail } from '../helpers/unique.js';
import { waitFor } from '../helpers/wait-for.js';
import { CLINIC, SEVEN } from './pipeline-fixtures.js';

describeEachBackend('pipelines (SPEC §20)', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;
  let readOnly: string;
  let leadsWriter: string;
  let clinic: { id: string };

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, token = tenant.token) =>
    ctx.request(method, `${API}${path}`, { token, body });
  /** A record's history once `done` says it holds what the test waits for (the feed shows an event once no earlier one can still commit). */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  const historyOf = (id: string, done: (events: any[]) => boolean, token = tenant.token) =>
    waitFor(async () => {
      const events = (await call('GET', `/events?objectId=${id}`, undefined, token)).body;
      return done(events) ? events : undefined;
    });
  const newLead = async (body: Record<string, unknown>, token = tenant.token) => {
    const res = await call('POST', '/leads', { name: 'Lead', email: uniqueEmail('lead'), ...body }, token);
    assert.equal(res.status, 201, res.text);
    return res.body as { _id: string; status: string; pipeline: string; customerId: string | null };
  };

  before(async () => {
    tenant = await ctx.tenant();
    other = await ctx.tenant();
    readOnly = (await ctx.token(tenant.id, ['leads:read'])).token;
    leadsWriter = (await ctx.token(tenant.id, ['leads:read', 'leads:write'])).token;
    const created = await call('POST', '/pipelines', { name: 'Clinic', stages: CLINIC });
    assert.equal(created.status, 201, created.text);
    clinic = created.body;
  });

  it("gives every tenant one default pipeline, its id the tenant's, with the seven stages of SPEC §3", async () => {
    const res = await call('GET', '/pipelines', undefined, (await ctx.token(other.id, ['leads:read'])).token);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.length, 1);
    const [first] = res.body;
    assert.equal(first.id, other.id);
    assert.equal(first.default, true);
    assert.deepEqual(
      first.stages.map((stage: { key: string }) => stage.key),
      SEVEN,
    );
    assert.deepEqual(
      first.stages.map((stage: { kind: string }) => stage.kind),
      ['open', 'open', 'open', 'open', 'open', 'won', 'lost'],
    );
  });

  it('creates a pipeline as sent, and reads it back; other tenants see none of it', async () => {
    const res = await call('GET', `/pipelines/${clinic.id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Clinic');
    assert.equal(res.body.default, false);
    assert.deepEqual(res.body.stages, CLINIC);
    assertError(await call('GET', `/pipelines/${clinic.id}`, undefined, other.token), 404, 'not_found');
    assertError(await call('DELETE', `/pipelines/${clinic.id}`, undefined, other.token), 404, 'not_found');
    const theirs = await call('GET', '/pipelines', undefined, other.token);
    assert.ok(!theirs.body.some((pipeline: { id: string }) => pipeline.id === clinic.id));
  });

  it('reads with leads:read, changes only with pipelines:write', async () => {
    assert.equal((await call('GET', '/pipelines', undefined, readOnly)).status, 200);
    assertForbidden(await call('POST', '/pipelines', { name: 'X', stages: CLINIC }, leadsWriter));
    assertForbidden(await call('PUT', `/pipelines/${clinic.id}`, { name: 'Y' }, leadsWriter));
    assertForbidden(await call('DELETE', `/pipelines/${clinic.id}`, undefined, leadsWriter));
    const customersOnly = (await ctx.token(tenant.id, ['customers:read'])).token;
    assertForbidden(await call('GET', '/pipelines', undefined, customersOnly));
    assertForbidden(await call('GET', `/pipelines/${clinic.id}`, undefined, customersOnly));
  });

  it('refuses bad definitions with the field at fault', async () => {
    const stage = (key: string) => ({ key, label: key, kind: 'open' });
    assertInvalidField(await call('POST', '/pipelines', { name: 'X', stages: [] }), 'stages');
    assertInvalidField(await call('POST', '/pipelines', { name: '', stages: [stage('a')] }), 'name');
    assertInvalidField(await call('POST', '/pipelines', { name: 'X', stages: [stage('a'), stage('a')] }), 'stages');
    assertInvalidField(await call('POST', '/pipelines', { name: 'X', stages: [stage('Bad Key')] }), 'stages.0.key');
    assertInvalidField(await call('POST', '/pipelines', { name: 'X', stages: [stage('1st')] }), 'stages.0.key');
    const many = Array.from({ length: 51 }, (_, i) => stage(`s${i}`));
    assertInvalidField(await call('POST', '/pipelines', { name: 'X', stages: many }), 'stages');
    assertInvalidField(
      await call('POST', '/pipelines', { name: 'X', stages: [{ key: 'a', label: 'A', kind: 'maybe' }] }),
      'stages.0.kind',
    );
    assertInvalidField(await call('PUT', `/pipelines/${clinic.id}`, {}), 'body');
  });

  it('puts a lead in the default pipeline, or the one named, at its first stage; a stage of another is a 400', async () => {
    const plain = await newLead({});
    assert.equal(plain.pipeline, tenant.id);
    assert.equal(plain.status, 'new');
    const patient = await newLead({ pipeline: clinic.id });
    assert.equal(patient.pipeline, clinic.id);
    assert.equal(patient.status, 'scheduled');
    const message = assertInvalidField(
      await call('POST', '/leads', { name: 'X', phone: '1', status: 'new', pipeline: clinic.id }),
      'status',
    );
    assert.match(message, /scheduled, attended, enrolled, gave_up/);
    assertInvalidField(await call('POST', '/leads', { name: 'X', phone: '1', status: 'enrolled' }), 'status');
    assertInvalidField(await call('POST', '/leads', { name: 'X', phone: '1', pipeline: other.id }), 'pipeline');
    // The list item stays the nine fields of SPEC §3.
    const list = await call('GET', `/leads?pipeline=${clinic.id}`);
    assert.ok(list.body.every((item: object) => !('pipeline' in item)));
  });

  it('checks the status against the lead’s own pipeline on every write path', async () => {
    const patient = await newLead({ pipeline: clinic.id });
    const plain = await newLead({});
    // PUT /status and PUT: a stage of another pipeline of the tenant is refused, naming the lead's stages.
    const refused = assertInvalidField(
      await call('PUT', `/leads/${patient._id}/status`, { status: 'qualified' }),
      'status',
    );
    assert.match(refused, /scheduled, attended, enrolled, gave_up/);
    assertInvalidField(await call('PUT', `/leads/${plain._id}`, { status: 'attended' }), 'status');
    assert.equal((await call('PUT', `/leads/${patient._id}/status`, { status: 'attended' })).body.status, 'attended');
    // Upsert, both ways.
    const email = uniqueEmail('upsert');
    const created = await call('POST', '/leads?upsert=email', {
      name: 'U',
      email,
      pipeline: clinic.id,
      status: 'attended',
    });
    assert.equal(created.status, 201, created.text);
    assertInvalidField(await call('POST', '/leads?upsert=email', { name: 'U', email, status: 'contacted' }), 'status');
    // A batch: each item on its own.
    const batch = await call('POST', '/leads/batch', {
      items: [
        { name: 'A', phone: '1', pipeline: clinic.id, status: 'enrolled' },
        { name: 'B', phone: '2', pipeline: clinic.id, status: 'won' },
        { name: 'C', phone: '3', status: 'won' },
      ],
    });
    assert.equal(batch.status, 200, batch.text);
    assert.deepEqual(
      batch.body.results.map((result: { status: number }) => result.status),
      [201, 400, 201],
    );
    assert.equal(batch.body.results[1].error.details[0].field, 'status');
    // A batch of upserts goes the savepoint way.
    const upserts = await call('POST', '/leads/batch?upsert=email', {
      items: [{ name: 'D', email: uniqueEmail('d'), pipeline: clinic.id, status: 'new' }],
    });
    assert.equal(upserts.body.results[0].status, 400);
  });

  it("an upsert that finds a lead checks its status against the lead's own pipeline, as PUT does", async () => {
    const email = uniqueEmail('upsert-own');
    const lead = await newLead({ name: 'Z', email, pipeline: clinic.id, status: 'scheduled' });
    // A stage of the lead's pipeline, none of the default's: taken, the lead left in its pipeline.
    const moved = await call('POST', '/leads?upsert=email', { name: 'Z', email, status: 'attended' });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.headers['funil-upsert'], 'updated');
    assert.equal(moved.body._id, lead._id);
    assert.equal(moved.body.status, 'attended');
    assert.equal(moved.body.pipeline, clinic.id);
    const stored = await call('GET', `/leads/${lead._id}`);
    assert.equal(stored.body.status, 'attended');
    assert.equal(stored.body.pipeline, clinic.id);
    // A stage of the default pipeline only: refused, naming the stages of the lead's own.
    const refused = assertInvalidField(
      await call('POST', '/leads?upsert=email', { name: 'Z', email, status: 'new' }),
      'status',
    );
    assert.match(refused, /scheduled, attended, enrolled, gave_up/);
    assert.equal((await call('GET', `/leads/${lead._id}`)).body.status, 'attended');
    // With `pipeline`, against that pipeline.
    const named = await call('POST', '/leads?upsert=email', {
      name: 'Z',
      email,
      pipeline: clinic.id,
      status: 'enrolled',
    });
    assert.equal(named.status, 200, named.text);
    assert.equal(named.body.status, 'enrolled');
    const back = await call('POST', '/leads?upsert=email', {
      name: 'Z',
      email,
      pipeline: tenant.id,
      status: 'proposal',
    });
    assert.equal(back.status, 200, back.text);
    assert.equal(back.body.pipeline, tenant.id);
    assert.equal(back.body.status, 'proposal');
    assertInvalidField(
      await call('POST', '/leads?upsert=email', { name: 'Z', email, pipeline: clinic.id, status: 'won' }),
      'status',
    );
    // A status no pipeline has: refused whatever the lead.
    assertInvalidField(await call('POST', '/leads?upsert=email', { name: 'Z', email, status: 'nowhere' }), 'status');
  });

  it("a batch of upserts checks each found lead's status against its own pipeline", async () => {
    const first = uniqueEmail('batch-own');
    const second = uniqueEmail('batch-own');
    const one = await newLead({ email: first, pipeline: clinic.id });
    const two = await newLead({ email: second, pipeline: clinic.id });
    const res = await call('POST', '/leads/batch?upsert=email', {
      items: [
        { name: 'A', email: first, status: 'gave_up' },
        { name: 'B', email: second, status: 'contacted' },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.results.map((result: { status: number }) => result.status),
      [200, 400],
      res.text,
    );
    assert.equal(res.body.results[0].data.status, 'gave_up');
    assert.equal(res.body.results[0].data.pipeline, clinic.id);
    const detail = res.body.results[1].error.details[0];
    assert.equal(detail.field, 'status');
    assert.match(detail.message, /scheduled, attended, enrolled, gave_up/);
    assert.equal((await call('GET', `/leads/${one._id}`)).body.status, 'gave_up');
    assert.equal((await call('GET', `/leads/${two._id}`)).body.status, 'scheduled');
  });

  it('an upsert that creates checks the status against the body’s pipeline, or the default one', async () => {
    // No pipeline in the body: the default one's stages, a stage of another refused.
    const refused = assertInvalidField(
      await call('POST', '/leads?upsert=email', { name: 'N', email: uniqueEmail('upsert-new'), status: 'attended' }),
      'status',
    );
    assert.match(refused, new RegExp(SEVEN.join(', ')));
    const created = await call('POST', '/leads?upsert=email', {
      name: 'N',
      email: uniqueEmail('upsert-new'),
      status: 'contacted',
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.pipeline, tenant.id);
    assert.equal(created.body.status, 'contacted');
    const batch = await call('POST', '/leads/batch?upsert=email', {
      items: [
        { name: 'N', email: uniqueEmail('upsert-new'), status: 'attended' },
        { name: 'N', email: uniqueEmail('upsert-new'), pipeline: clinic.id, status: 'attended' },
      ],
    });
    assert.deepEqual(
      batch.body.results.map((result: { status: number }) => result.status),
      [400, 201],
      batch.text,
    );
    assert.match(batch.body.results[0].error.details[0].message, new RegExp(SEVEN.join(', ')));
  });

  it("moves a lead to another pipeline's first stage, or the stage sent; naming its own pipeline keeps the stage", async () => {
    const lead = await newLead({ status: 'qualified' });
    const moved = await call('PUT', `/leads/${lead._id}`, { pipeline: clinic.id });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.pipeline, clinic.id);
    assert.equal(moved.body.status, 'scheduled');
    const kept = await call('PUT', `/leads/${lead._id}`, { pipeline: clinic.id, score: 5 });
    assert.equal(kept.body.status, 'scheduled');
    const back = await call('PUT', `/leads/${lead._id}`, { pipeline: tenant.id, status: 'proposal' });
    assert.equal(back.body.pipeline, tenant.id);
    assert.equal(back.body.status, 'proposal');
    assertInvalidField(await call('PUT', `/leads/${lead._id}`, { pipeline: clinic.id, status: 'proposal' }), 'status');
    const changesPipeline = (event: { data: { changedFields: string[] } }) =>
      event.data.changedFields.includes('pipeline');
    const history = await historyOf(lead._id, (events) => events.filter(changesPipeline).length >= 2);
    const change = history.find(changesPipeline);
    assert.equal(change.type, 'lead.status_changed');
    assert.equal(change.data.previous.pipeline, tenant.id);
  });

  it("converts a lead to its pipeline's first won stage; a pipeline without one leaves it where it is", async () => {
    const patient = await newLead({ pipeline: clinic.id });
    const converted = await call('POST', `/leads/${patient._id}/convert`);
    assert.equal(converted.status, 201, converted.text);
    assert.equal(converted.body.lead.status, 'enrolled');
    const noWins = await call('POST', '/pipelines', {
      name: 'Nurture',
      stages: [
        { key: 'cold', label: 'Cold', kind: 'open' },
        { key: 'warm', label: 'Warm', kind: 'open' },
      ],
    });
    const nurtured = await newLead({ pipeline: noWins.body.id, status: 'warm' });
    const kept = await call('POST', `/leads/${nurtured._id}/convert`);
    assert.equal(kept.status, 201, kept.text);
    assert.equal(kept.body.lead.status, 'warm');
    assert.ok(kept.body.lead.customerId);
    assert.equal((await call('DELETE', `/pipelines/${noWins.body.id}?moveTo=new`)).status, 200);
  });

  it('lists by pipeline; `status` names its stages, and a stage of none is a 400', async () => {
    const patient = await newLead({ pipeline: clinic.id, status: 'gave_up' });
    const listed = await call('GET', `/leads?pipeline=${clinic.id}&status=gave_up`);
    assert.equal(listed.status, 200, listed.text);
    assert.ok(listed.body.some((item: { _id: string }) => item._id === patient._id));
    assert.ok(listed.body.every((item: { status: string }) => item.status === 'gave_up'));
    assertInvalidField(await call('GET', `/leads?pipeline=${clinic.id}&status=new`), 'status');
    assertInvalidField(await call('GET', '/leads?status=nowhere'), 'status');
    assertInvalidField(await call('GET', `/leads?pipeline=${other.id}`), 'pipeline');
    const inFirst = await call('GET', `/leads?pipeline=${tenant.id}&limit=1000`);
    assert.ok(inFirst.body.length > 0);
    assert.ok(!inFirst.body.some((item: { _id: string }) => item._id === patient._id));
  });

  it('counts the summary of one pipeline, each stage with its kind', async () => {
    const summary = await call('GET', `/leads/summary?pipeline=${clinic.id}`);
    assert.equal(summary.status, 200, summary.text);
    assert.equal(summary.body.pipeline, clinic.id);
    assert.deepEqual(
      summary.body.byStatus.map((row: { status: string; kind: string }) => [row.status, row.kind]),
      CLINIC.map((stage) => [stage.key, stage.kind]),
    );
    const byDefault = await call('GET', '/leads/summary');
    assert.equal(byDefault.body.pipeline, tenant.id);
    assertInvalidField(await call('GET', `/leads/summary?pipeline=${other.id}`), 'pipeline');
  });

  it('refuses to remove a stage that holds leads (409 with the count); with moveTo, moves them with events', async () => {
    const pipeline = (
      await call('POST', '/pipelines', {
        name: 'Partners',
        stages: [
          { key: 'intro', label: 'Intro', kind: 'open' },
          { key: 'pilot', label: 'Pilot', kind: 'open' },
          { key: 'signed', label: 'Signed', kind: 'won' },
        ],
      })
    ).body;
    const inPilot = [];
    for (let i = 0; i < 3; i++) inPilot.push(await newLead({ pipeline: pipeline.id, status: 'pilot' }));
    const without = [
      { key: 'intro', label: 'Intro', kind: 'open' },
      { key: 'signed', label: 'Signed', kind: 'won' },
    ];
    const refused = await call('PUT', `/pipelines/${pipeline.id}`, { stages: without });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.code, 'conflict');
    assert.equal(refused.body.leadCount, 3);
    assertInvalidField(await call('PUT', `/pipelines/${pipeline.id}?moveTo=pilot`, { stages: without }), 'moveTo');
    const done = await call('PUT', `/pipelines/${pipeline.id}?moveTo=intro`, { stages: without });
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(done.body.stages, without);
    for (const lead of inPilot) {
      assert.equal((await call('GET', `/leads/${lead._id}`)).body.status, 'intro');
      const events = await historyOf(lead._id, (all) => all.at(-1)?.type === 'lead.status_changed');
      const last = events.at(-1);
      assert.equal(last.type, 'lead.status_changed');
      assert.deepEqual(last.data.previous, { status: 'pilot' });
    }
    // Another pipeline's stage, by id.
    const lead = await newLead({ pipeline: pipeline.id, status: 'signed' });
    const away = await call('PUT', `/pipelines/${pipeline.id}?moveTo=${tenant.id}:won`, {
      stages: without.slice(0, 1),
    });
    assert.equal(away.status, 200, away.text);
    const read = (await call('GET', `/leads/${lead._id}`)).body;
    assert.deepEqual([read.pipeline, read.status], [tenant.id, 'won']);
  });

  it('deletes a pipeline only when it is not the default, moving its leads when told where', async () => {
    const pipeline = (
      await call('POST', '/pipelines', { name: 'Renewals', stages: [{ key: 'due', label: 'Due', kind: 'open' }] })
    ).body;
    const lead = await newLead({ pipeline: pipeline.id });
    const refused = await call('DELETE', `/pipelines/${pipeline.id}`);
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.leadCount, 1);
    assertError(await call('DELETE', `/pipelines/${tenant.id}`), 409, 'conflict');
    assertInvalidField(await call('DELETE', `/pipelines/${pipeline.id}?moveTo=due`), 'moveTo');
    assert.equal((await call('DELETE', `/pipelines/${pipeline.id}?moveTo=contacted`)).status, 200);
    const read = (await call('GET', `/leads/${lead._id}`)).body;
    assert.deepEqual([read.pipeline, read.status], [tenant.id, 'contacted']);
    assertError(await call('GET', `/pipelines/${pipeline.id}`), 404, 'not_found');
  });

  it('makes another pipeline the default: new leads go there; the former default can then be deleted', async () => {
    const owner = await ctx.tenant();
    const as = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) =>
      call(method, path, body, owner.token);
    const made = await as('POST', '/pipelines', { name: 'Main', stages: CLINIC, default: true });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.body.default, true);
    const all = (await as('GET', '/pipelines')).body;
    assert.deepEqual(
      all.map((pipeline: { id: string; default: boolean }) => [pipeline.id, pipeline.default]),
      [
        [owner.id, false],
        [made.body.id, true],
      ],
    );
    const lead = await call('POST', '/leads', { name: 'N', phone: '1' }, owner.token);
    assert.deepEqual([lead.body.pipeline, lead.body.status], [made.body.id, 'scheduled']);
    assertInvalidField(await as('PUT', `/pipelines/${made.body.id}`, { default: false }), 'default');
    assert.equal((await as('DELETE', `/pipelines/${owner.id}`)).status, 200);
    assert.equal((await as('GET', '/pipelines')).body.length, 1);
  });

  it('holds at most 20 pipelines per tenant, under concurrent creates too', async () => {
    const owner = await ctx.tenant();
    const body = { name: 'P', stages: [{ key: 'a', label: 'A', kind: 'open' }] };
    const answers = await Promise.all(Array.from({ length: 24 }, () => call('POST', '/pipelines', body, owner.token)));
    const created = answers.filter((answer) => answer.status === 201).length;
    assert.equal(created, 19, 'the first pipeline counts');
    for (const answer of answers.filter((a) => a.status !== 201)) assertError(answer, 409, 'conflict');
    assert.equal((await call('GET', '/pipelines', undefined, owner.token)).body.length, 20);
  });

  it('writes pipeline.* events to the feed, for tokens that read leads', async () => {
    const made = await call('POST', '/pipelines', { name: 'Evented', stages: CLINIC });
    await call('PUT', `/pipelines/${made.body.id}`, { name: 'Evented 2' });
    await call('DELETE', `/pipelines/${made.body.id}`);
    const mine = await waitFor(async () => {
      const feed = await call('GET', '/events?types=pipeline.created,pipeline.updated,pipeline.deleted&limit=1000');
      assert.equal(feed.status, 200, feed.text);
      const found = feed.body.filter(
        (event: { data: { object: { id: string } } }) => event.data.object.id === made.body.id,
      );
      return found.length >= 3 ? found : undefined;
    });
    assert.deepEqual(
      mine.map((event: { type: string }) => event.type),
      ['pipeline.created', 'pipeline.updated', 'pipeline.deleted'],
    );
    assert.deepEqual(mine[1].data.changedFields, ['name']);
    assert.deepEqual(mine[1].data.previous, { name: 'Evented' });
    assert.deepEqual(mine[0].data.object.stages, CLINIC);
    const customersOnly = (await ctx.token(tenant.id, ['customers:read'])).token;
    assertForbidden(await call('GET', '/events?types=pipeline.created', undefined, customersOnly));
  });

  it('resumes a move an instance left half done (a crash), from where it stopped', async () => {
    const owner = await ctx.tenant();
    const made = await call('POST', '/pipelines', { name: 'Crash', stages: CLINIC }, owner.token);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await newLead({ pipeline: made.body.id, status: 'gave_up' }, owner.token))._id);
    // As an instance leaves it when killed mid-move: the stage gone, the move recorded, two leads moved.
    await sql`update pipelines set stages = ${JSON.stringify(CLINIC.slice(0, 3))}::jsonb
      where tenant_id = ${owner.id} and id = ${made.body.id}`.execute(ctx.db);
    await sql`insert into pipeline_moves (tenant_id, id, from_pipeline, from_stage, to_pipeline, to_stage)
      values (${owner.id}, gen_random_uuid(), ${made.body.id}, 'gave_up', ${made.body.id}, 'attended')`.execute(ctx.db);
    await sql`update leads set status = 'attended' where id = any(${ids.slice(0, 2)}::uuid[])`.execute(ctx.db);
    const restarted = ctx.services();
    await restarted.pipelineMoves.resumeAll();
    for (const id of ids)
      assert.equal((await call('GET', `/leads/${id}`, undefined, owner.token)).body.status, 'attended');
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from pipeline_moves where tenant_id = ${owner.id}`.execute(ctx.db);
    assert.equal(rows[0]?.n, 0, 'the move is over');
    const moved = await historyOf(ids[4] as string, (all) => all.at(-1)?.type === 'lead.status_changed', owner.token);
    assert.equal(moved.at(-1).type, 'lead.status_changed');
  });

  it('takes at once a pipeline made, or a stage added, on another instance', async () => {
    const owner = await ctx.tenant();
    const actor = { tenantId: owner.id, tokenId: owner.tokenId };
    const lead = await newLead({}, owner.token); // this instance now has the tenant's pipelines
    const elsewhere = ctx.services();
    const made = await elsewhere.pipelines.create(ctx.db, actor, { name: 'Elsewhere', stages: CLINIC } as never);
    const placed = await newLead({ pipeline: made.id, status: 'attended' }, owner.token);
    assert.equal(placed.pipeline, made.id);
    assert.equal((await call('GET', `/leads?pipeline=${made.id}`, undefined, owner.token)).status, 200);
    assert.equal((await call('GET', `/leads/summary?pipeline=${made.id}`, undefined, owner.token)).status, 200);
    const first = (await elsewhere.pipelines.list(ctx.db, owner.id))[0] as unknown as { id: string; stages: object[] };
    await elsewhere.pipelines.update(
      ctx.db,
      actor,
      first.id,
      { stages: [...first.stages, { key: 'nurture', label: 'Nurture', kind: 'open' }] } as never,
      undefined,
    );
    const moved = await call('PUT', `/leads/${lead._id}/status`, { status: 'nurture' }, owner.token);
    assert.equal(moved.status, 200, moved.text);
    const batch = await call(
      'POST',
      '/leads/batch',
      { items: [{ name: 'B', phone: '1', status: 'nurture' }] },
      owner.token,
    );
    assert.equal(batch.body.results[0].status, 201, batch.text);
  });

  it('is refused on another instance within 5 s of a stage removed here', async () => {
    const pipeline = (
      await call('POST', '/pipelines', {
        name: 'Shared',
        stages: [
          { key: 'one', label: 'One', kind: 'open' },
          { key: 'two', label: 'Two', kind: 'open' },
        ],
      })
    ).body;
    const elsewhere = ctx.services();
    const actor = { tenantId: tenant.id, tokenId: tenant.tokenId };
    const lead = await elsewhere.leads.create(ctx.db, actor, {
      name: 'X',
      phone: '1',
      pipeline: pipeline.id,
      status: 'two',
    } as never);
    assert.equal(lead.object.status, 'two');
    const removed = await call('PUT', `/pipelines/${pipeline.id}?moveTo=one`, {
      stages: [{ key: 'one', label: 'One', kind: 'open' }],
    });
    assert.equal(removed.status, 200, removed.text);
    const started = Date.now();
    let refusedAfter: number | undefined;
    while (Date.now() - started < 5_000) {
      try {
        await elsewhere.leads.setStatus(ctx.db, actor, lead.object._id, 'two');
      } catch (error) {
        assert.equal((error as { statusCode?: number }).statusCode, 400);
        refusedAfter = Date.now() - started;
        break;
      }
      await sleep(100);
    }
    assert.ok(refusedAfter !== undefined, 'the other instance still took the removed stage after 5 s');
    // Any lead it put there meanwhile is moved too, once every copy is past the change.
    const deadline = Date.now() + 10_000;
    while ((await call('GET', `/leads/${lead.object._id}`)).body.status !== 'one' && Date.now() < deadline) {
      await sleep(200);
    }
    assert.equal((await call('GET', `/leads/${lead.object._id}`)).body.status, 'one');
  });
});
