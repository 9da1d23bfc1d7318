import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { importRepository } from '../../src/imports/import.repository.js';
import { newId } from '../../src/shared/ids.js';
import { assertError } from '../helpers/assert-error.js';
import { feedSettled } from '../helpers/feed.js';
import { ADMIN_API, ADMIN_TOKEN, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { uniqueEmail } from '../helpers/unique.js';
import { CSV, faultsOf, imported, importOver, type Json, NDJSON, upload } from './import-helpers.js';

describeEachBackend('imports (SPEC §23)', (ctx) => {
  let tenant: TestTenant;
  const get = async (path: string, token = tenant.token): Promise<Json> => {
    const res = await ctx.request('GET', `/api/external/v1${path}`, { token });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const leadsBy = async (source: string): Promise<Json[]> => {
    const list = await get(`/leads?source=${source}&limit=1000&sort=createdAt`);
    return Promise.all(list.map((item: Json) => get(`/leads/${item._id}`)));
  };

  before(async () => {
    tenant = await ctx.tenant();
    for (const field of [
      { resource: 'lead', key: 'seats', label: 'Seats', type: 'integer' },
      { resource: 'lead', key: 'budget', label: 'Budget', type: 'number' },
      { resource: 'lead', key: 'vip', label: 'VIP', type: 'boolean' },
      { resource: 'lead', key: 'tools', label: 'Tools', type: 'multiselect', options: ['crm', 'erp', 'bi'] },
    ]) {
      const res = await ctx.api(tenant, 'POST', '/fields', { body: field });
      assert.equal(res.status, 201, res.text);
    }
  });

  it('reads a CSV as a Brazilian spreadsheet writes it: BOM, `;`, CRLF, quotes, 1.234,56, sim/não, a|b', async () => {
    const file =
      '\uFEFFname;email;phone;source;score;notes;custom.seats;custom.budget;custom.vip;custom.tools\r\n' +
      'Ana Souza;ana@br.example;(11) 91234-5678;planilha;40;"Disse: ""ligar; amanhã""";3;1.234,56;sim;crm|bi\r\n' +
      '"Bruno\r\nLima";BRUNO@BR.EXAMPLE;;planilha;;;;12,5;não;\r\n' +
      '\r\n';
    const done = await imported(ctx, tenant, file, 'resource=lead');
    assert.deepEqual(
      { status: done.status, total: done.total, processed: done.processed, created: done.created, failed: done.failed },
      { status: 'succeeded', total: 2, processed: 2, created: 2, failed: 0 },
    );
    const [ana, bruno] = await leadsBy('planilha');
    assert.equal(ana.name, 'Ana Souza');
    assert.equal(ana.score, 40);
    assert.equal(ana.notes, 'Disse: "ligar; amanhã"');
    assert.deepEqual(ana.custom, { seats: 3, budget: 1234.56, vip: true, tools: ['crm', 'bi'] });
    assert.equal(bruno.name, 'Bruno\r\nLima'.trim());
    assert.equal(bruno.email, 'bruno@br.example', 'as POST /leads takes it: lower-cased');
    assert.equal(bruno.phone, null, 'an empty cell is no value');
    assert.deepEqual(bruno.custom, { budget: 12.5, vip: false });
    assert.ok(done.startedAt && done.finishedAt);
  });

  it('reads `,` files with plain numbers, and NDJSON, each row as POST /leads would take it', async () => {
    const csv =
      'name,email,source,custom.budget\nCarla,carla@x.example,virgula,"1,234.5"\nDavi,davi@x.example,virgula,99.5\n';
    const done = await imported(ctx, tenant, csv, 'resource=lead');
    assert.equal(done.created, 1);
    assert.equal(done.failed, 1, '"1,234.5" is no number in a `,` file');
    const [fault] = await faultsOf(ctx, tenant, done.id);
    assert.deepEqual(
      { row: fault.row, field: fault.field, code: fault.code },
      { row: 1, field: 'custom.budget', code: 'validation_failed' },
    );
    const ndjson = `${JSON.stringify({ name: 'Eva', email: 'eva@x.example', source: 'nd', custom: { seats: 2 } })}\n\n{not json}\n[1,2]\n${JSON.stringify({ name: 'Fabio', phone: '11 3333-4444', source: 'nd' })}`;
    const nd = await imported(ctx, tenant, ndjson, 'resource=lead', NDJSON);
    assert.deepEqual({ total: nd.total, created: nd.created, failed: nd.failed }, { total: 4, created: 2, failed: 2 });
    const faults = await faultsOf(ctx, tenant, nd.id);
    assert.deepEqual(
      faults.map((f: Json) => [f.row, f.field, f.code]),
      [
        [2, null, 'validation_failed'],
        [3, null, 'validation_failed'],
      ],
    );
    assert.deepEqual(
      (await leadsBy('nd')).map((lead) => lead.name),
      ['Eva', 'Fabio'],
    );
  });

  it('refuses, row by row, an NDJSON line no JSON body could carry: nested past 64 levels, or half a character', async () => {
    const deep = `{"name":"Deep","email":"deep@x.example","source":"nd-hostile","notes":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const shallow = `{"name":"Shallow","email":"shallow@x.example","source":"nd-hostile","notes":"ok","custom":{"tools":${'['.repeat(3)}${']'.repeat(3)}}}`;
    const surrogate = '{"name":"Half \\ud800 char","email":"half@x.example","source":"nd-hostile"}';
    const ok = JSON.stringify({ name: 'Whole', email: 'whole@x.example', source: 'nd-hostile' });
    const nd = await imported(ctx, tenant, [deep, surrogate, shallow, ok].join('\n'), 'resource=lead', NDJSON);
    assert.deepEqual(
      { status: nd.status, total: nd.total, created: nd.created, failed: nd.failed },
      { status: 'succeeded', total: 4, created: 1, failed: 3 },
    );
    const faults = await faultsOf(ctx, tenant, nd.id);
    assert.deepEqual(
      [...new Set(faults.map((f: Json) => f.row))],
      [1, 2, 3],
      'row 3: a list nested 3 deep, only invalid',
    );
    assert.ok(faults.every((f: Json) => f.code === 'validation_failed'));
    assert.match(faults[0].message, /64 níveis/);
    assert.match(faults[1].message, /surrogate/);
    assert.deepEqual(
      (await leadsBy('nd-hostile')).map((lead) => lead.name),
      ['Whole'],
    );
  });

  it("lists each refused row with the §2 code and message it would have had as a request, in the caller's language", async () => {
    const taken = uniqueEmail();
    const customer = await ctx.api(tenant, 'POST', '/customers', { body: { name: 'Taken', email: taken } });
    assert.equal(customer.status, 201, customer.text);
    const file = `name,email,status,score\nOk,ok@x.example,new,10\n,noname@x.example,new,10\nBad,not-an-email,new,10\nStage,stage@x.example,nowhere,10\nHigh,high@x.example,new,101\n`;
    const done = await imported(ctx, tenant, file, 'resource=lead');
    assert.deepEqual({ created: done.created, failed: done.failed }, { created: 1, failed: 4 });
    const faults = await faultsOf(ctx, tenant, done.id);
    assert.deepEqual(
      faults.map((f: Json) => [f.row, f.field]),
      [
        [2, 'name'],
        [3, 'email'],
        [4, 'status'],
        [5, 'score'],
      ],
    );
    assert.ok(faults.every((f: Json) => f.code === 'validation_failed' && f.message.length > 0));
    const english = await ctx.api(tenant, 'GET', `/imports/${done.id}/errors`, {
      headers: { 'accept-language': 'en' },
    });
    assert.notEqual(english.body[0].message, faults[0].message, 'pt by default, en when asked');
    const customers = `name,email\nAgain,${taken}\n`;
    const dup = await imported(ctx, tenant, customers, 'resource=customer');
    const [conflict] = await faultsOf(ctx, tenant, dup.id);
    assert.equal(conflict.code, 'conflict', 'a customer e-mail already held');
  });

  it('refuses a header that names no field, before storing anything', async () => {
    for (const [file, words] of [
      ['name,emial\nA,a@x.example\n', 'emial'],
      ['name,name\nA,B\n', 'name'],
      ['name,custom.nope\nA,1\n', 'custom.nope'],
      ['name,custom\nA,{}\n', 'custom'],
      ['', 'header'],
      ['name,__proto__\nA,1\n', '__proto__'],
    ] as const) {
      const res = await upload(ctx, tenant.token, file, 'resource=lead', CSV, { 'accept-language': 'en' });
      assertError(res, 400, 'validation_failed', { details: true });
      assert.match(res.body.error, new RegExp(words.replace(/[.]/g, '\\.')), res.text);
    }
    const upsert = await upload(ctx, tenant.token, 'name\nA\n', 'resource=lead&upsert=email');
    assertError(upsert, 400, 'validation_failed', { details: true });
    const quote = await upload(ctx, tenant.token, 'name,email\n"open,a@x.example\n', 'resource=lead');
    assertError(quote, 400, 'validation_failed', { details: true });
    assertError(await upload(ctx, tenant.token, 'name\nA\n', 'resource=opportunity'), 400, 'validation_failed', {
      details: 'maybe',
    });
    assertError(
      await upload(ctx, tenant.token, '{"name":"A"}', 'resource=lead', 'application/json'),
      415,
      'unsupported_media_type',
    );
    assertError(
      await upload(ctx, tenant.token, 'name\nA\n', 'resource=lead', 'text/plain'),
      415,
      'unsupported_media_type',
    );
  });

  it('upserts by e-mail: existing records updated, others created; needs the read scope too', async () => {
    const email = uniqueEmail();
    const first = await ctx.api(tenant, 'POST', '/leads', {
      body: { name: 'Old name', email, score: 5, source: 'up' },
    });
    const file = `email,name,score,source\n${email},New name,,up\n${uniqueEmail()},Other,7,up\n`;
    const done = await imported(ctx, tenant, file, 'resource=lead&upsert=email');
    assert.deepEqual({ created: done.created, updated: done.updated }, { created: 1, updated: 1 });
    const after = await get(`/leads/${first.body._id}`);
    assert.deepEqual({ name: after.name, score: after.score }, { name: 'New name', score: 5 });
    const writer = await ctx.token(tenant.id, ['leads:write']);
    const res = await upload(ctx, writer.token, file, 'resource=lead&upsert=email');
    assertError(res, 403, 'forbidden');
    assert.match(res.body.error, /leads:read/);
    const plain = await upload(ctx, writer.token, `name,phone,source\nW,11 3333-0007,up\n`, 'resource=lead');
    assert.equal(plain.status, 202, 'a write-only token imports without upsert');
    assertError(await upload(ctx, writer.token, `name\nW\n`, 'resource=customer'), 403, 'forbidden');
  });

  it('a dry run counts and lists what would happen, writing nothing', async () => {
    const before = (await get('/leads?source=dry')).length;
    const done = await imported(
      ctx,
      tenant,
      'name,phone,source,score\nA,11 3333-0001,dry,1\nB,11 3333-0002,dry,500\nC,11 3333-0003,dry,3\n',
      'resource=lead&dryRun=true',
    );
    assert.deepEqual(
      { status: done.status, dryRun: done.dryRun, created: done.created, failed: done.failed },
      { status: 'succeeded', dryRun: true, created: 2, failed: 1 },
      JSON.stringify(await faultsOf(ctx, tenant, done.id)),
    );
    assert.equal((await get('/leads?source=dry')).length, before);
    assertError(await ctx.api(tenant, 'POST', `/imports/${done.id}/revert`), 409, 'conflict');
  });

  it('marks each change with the import: its events carry requestId import:<id>', async () => {
    const done = await imported(ctx, tenant, 'name,phone,source\nEvented,11 3333-0004,evt\n', 'resource=lead');
    const [lead] = await leadsBy('evt');
    assert.ok(lead, JSON.stringify(done));
    await feedSettled(ctx.db, tenant.id);
    const events = await get(`/events?objectId=${lead._id}`);
    assert.equal(events[0]?.requestId, `import:${done.id}`);
    assert.equal(events[0]?.actor.tokenId, tenant.tokenId);
  });

  it('reverts: deletes what it created, restores what it updated, lists what changed since', async () => {
    const kept = uniqueEmail();
    const changed = uniqueEmail();
    const a = await ctx.api(tenant, 'POST', '/leads', { body: { name: 'Kept', email: kept, score: 1, source: 'rv' } });
    const b = await ctx.api(tenant, 'POST', '/leads', {
      body: { name: 'Changed', email: changed, score: 2, source: 'rv' },
    });
    const file = `email,name,score,source\n${kept},Kept2,11,rv\n${changed},Changed2,22,rv\nnew@rv.example,New,33,rv\n`;
    const done = await imported(ctx, tenant, file, 'resource=lead&upsert=email');
    assert.deepEqual({ created: done.created, updated: done.updated }, { created: 1, updated: 2 });
    const edit = await ctx.api(tenant, 'PUT', `/leads/${b.body._id}`, { body: { notes: 'edited by a person' } });
    assert.equal(edit.status, 200, edit.text);
    const started = await ctx.api(tenant, 'POST', `/imports/${done.id}/revert`);
    assert.equal(started.status, 202, started.text);
    const over = await importOver(ctx, tenant, done.id);
    assert.deepEqual(
      {
        status: over.revert.status,
        deleted: over.revert.deleted,
        restored: over.revert.restored,
        skipped: over.revert.skipped,
      },
      { status: 'succeeded', deleted: 1, restored: 1, skipped: 1 },
    );
    const restored = await get(`/leads/${a.body._id}`);
    assert.deepEqual({ name: restored.name, score: restored.score }, { name: 'Kept', score: 1 });
    const left = await get(`/leads/${b.body._id}`);
    assert.deepEqual({ name: left.name, notes: left.notes }, { name: 'Changed2', notes: 'edited by a person' });
    assert.deepEqual((await leadsBy('rv')).map((lead) => lead.email).sort(), [changed, kept].sort());
    const skipped = await faultsOf(ctx, tenant, done.id, '&phase=revert');
    assert.deepEqual(
      skipped.map((f: Json) => [f.row, f.recordId, f.code]),
      [[2, b.body._id, 'conflict']],
    );
    assertError(await ctx.api(tenant, 'POST', `/imports/${done.id}/revert`), 409, 'conflict');
  });

  it('cancels an import not over, and refuses to cancel one that is', async () => {
    const done = await imported(ctx, tenant, 'name,phone,source\nX,11 3333-0005,cx\n', 'resource=lead');
    assertError(await ctx.api(tenant, 'POST', `/imports/${done.id}/cancel`), 409, 'conflict');
  });

  it('takes several clients importing at once, each import whole', async () => {
    const files = Array.from({ length: 4 }, (_, client) => {
      const lines = ['name,email,source'];
      for (let i = 0; i < 300; i++) lines.push(`C${client} ${i},c${client}.${i}@many.example,many`);
      return `${lines.join('\n')}\n`;
    });
    const done = await Promise.all(files.map((file) => imported(ctx, tenant, file, 'resource=lead')));
    for (const each of done)
      assert.deepEqual({ created: each.created, failed: each.failed }, { created: 300, failed: 0 });
    let count = 0;
    let cursor = '';
    do {
      const page = await ctx.api(tenant, 'GET', `/leads?source=many&limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
      count += page.body.length;
      cursor = (page.headers['x-next-cursor'] as string | undefined) ?? '';
    } while (cursor);
    assert.equal(count, 1200);
  });

  it('a retried upload with its Idempotency-Key answers the first import again', async () => {
    const file = 'name,phone,source\nOnce,11 3333-0100,idem\n';
    const headers = { 'idempotency-key': `import-${newId()}` };
    const first = await upload(ctx, tenant.token, file, 'resource=lead', CSV, headers);
    const again = await upload(ctx, tenant.token, file, 'resource=lead', CSV, headers);
    assert.equal(first.status, 202, first.text);
    assert.equal(again.status, 202, again.text);
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    await importOver(ctx, tenant, first.body.id);
    assert.equal((await get('/leads?source=idem')).length, 1);
  });

  it('shows an import only to its tenant, and to tokens of its resource', async () => {
    const done = await imported(ctx, tenant, 'name,phone,source\nScoped,11 3333-0006,sc\n', 'resource=lead');
    const other = await ctx.tenant('Other');
    for (const path of [`/imports/${done.id}`, `/imports/${done.id}/errors`]) {
      assertError(await ctx.api(other, 'GET', path), 404, 'not_found');
    }
    assertError(await ctx.api(other, 'POST', `/imports/${done.id}/revert`), 404, 'not_found');
    assertError(await ctx.api(other, 'POST', `/imports/${done.id}/cancel`), 404, 'not_found');
    const customersOnly = await ctx.token(tenant.id, ['customers:read', 'customers:write']);
    const seen = await ctx.request('GET', `/api/external/v1/imports/${done.id}`, { token: customersOnly.token });
    assertError(seen, 404, 'not_found');
    const reader = await ctx.token(tenant.id, ['leads:read']);
    assert.equal((await get(`/imports/${done.id}`, reader.token)).id, done.id);
    const revert = await ctx.request('POST', `/api/external/v1/imports/${done.id}/revert`, { token: reader.token });
    assertError(revert, 403, 'forbidden');
  });
});

describeEachBackend('imports and personal data (SPEC §17, §23)', (ctx) => {
  it("an erasure drops the person's rows from an import not applied yet: they are never written", async () => {
    const tenant = await ctx.tenant();
    const id = newId();
    // Stored and queued, as an upload leaves it before a job has taken it.
    await importRepository.create(ctx.db, {
      tenantId: tenant.id,
      id,
      resource: 'lead',
      format: 'csv',
      upsert: null,
      dryRun: false,
      tokenId: tenant.tokenId,
      columns: ['name', 'email'],
      delimiter: ',',
    });
    await importRepository.addChunk(ctx.db, id, 0, 1, [
      ['Erased Person', 'Gone@Erase.example'],
      ['Kept Person', 'kept@erase.example'],
    ]);
    await importRepository.received(ctx.db, tenant.id, id, 2);
    const erased = await ctx.api(tenant, 'POST', '/personal-data/erase', { body: { email: 'gone@erase.example' } });
    assert.equal(erased.status, 200, erased.text);
    const [chunk] = await importRepository.chunksOf(ctx.db, id);
    assert.deepEqual(chunk?.rows, ['erased', ['Kept Person', 'kept@erase.example']]);
    const instance = ctx.services();
    try {
      await instance.importJobs.resumeAll();
      const done = await importOver(ctx, tenant, id);
      assert.deepEqual({ created: done.created, failed: done.failed }, { created: 1, failed: 1 });
    } finally {
      await instance.jobQueue.stop();
    }
    const [fault] = await faultsOf(ctx, tenant, id);
    assert.equal(fault.row, 1);
    const found = await ctx.api(tenant, 'GET', '/leads?email=gone@erase.example');
    assert.deepEqual(found.body, []);
  });
});

describeEachBackend('an import and the token that made it (SPEC §5, §23)', (ctx) => {
  /** An import of two leads, stored and queued as an upload leaves it before a job takes it, made by `tokenId`. */
  async function queued(tenantId: string, tokenId: string, source: string): Promise<string> {
    const id = newId();
    await importRepository.create(ctx.db, {
      tenantId,
      id,
      resource: 'lead',
      format: 'csv',
      upsert: null,
      dryRun: false,
      tokenId,
      columns: ['name', 'phone', 'source'],
      delimiter: ',',
    });
    await importRepository.addChunk(ctx.db, id, 0, 1, [
      ['First', '11 3333-0001', source],
      ['Second', '11 3333-0002', source],
    ]);
    await importRepository.received(ctx.db, tenantId, id, 2);
    return id;
  }

  /** Runs the import jobs on another instance until every import of the list is over, as `reader` sees them. */
  async function runUntilOver(reader: TestTenant, ids: readonly string[]): Promise<Json[]> {
    const instance = ctx.services();
    try {
      await instance.importJobs.resumeAll();
      return await Promise.all(ids.map((id) => importOver(ctx, reader, id)));
    } finally {
      await instance.jobQueue.stop();
    }
  }

  it('stops, cancelled, once its token is revoked or has expired: nothing more is written as that token', async () => {
    const tenant = await ctx.tenant();
    const revoked = await ctx.token(tenant.id, ['leads:write']);
    const expiring = await ctx.token(tenant.id, ['leads:write'], new Date(Date.now() + 60_000));
    const kept = await ctx.token(tenant.id, ['leads:write']);
    const revokedImport = await queued(tenant.id, revoked.id, 'revoked-token');
    const expiredImport = await queued(tenant.id, expiring.id, 'expired-token');
    const keptImport = await queued(tenant.id, kept.id, 'kept-token');

    const revoke = await ctx.request('DELETE', `${ADMIN_API}/tokens/${revoked.id}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(revoke.status, 200, revoke.text);
    await ctx.db
      .updateTable('apiTokens')
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where('id', '=', expiring.id)
      .execute();

    const [revokedOver, expiredOver, keptOver] = await runUntilOver(tenant, [revokedImport, expiredImport, keptImport]);
    for (const over of [revokedOver, expiredOver]) {
      assert.deepEqual(
        { status: over.status, processed: over.processed, created: over.created },
        { status: 'cancelled', processed: 0, created: 0 },
      );
    }
    assert.deepEqual({ status: keptOver.status, created: keptOver.created }, { status: 'succeeded', created: 2 });
    for (const source of ['revoked-token', 'expired-token']) {
      assert.deepEqual((await ctx.api(tenant, 'GET', `/leads?source=${source}`)).body, [], source);
    }
    // A transaction open elsewhere on a shared server holds events back from the feed (SPEC §14).
    await feedSettled(ctx.db, tenant.id);
    const events = await ctx.api(tenant, 'GET', '/events', {
      query: { types: 'import.finished', objectId: revokedImport },
    });
    assert.deepEqual(
      events.body.map((event: Json) => event.data.object.status),
      ['cancelled'],
    );
  });

  it('waits, written nothing, while its tenant is inactive, and goes on once it is active again (SPEC §5.5)', async () => {
    const tenant = await ctx.tenant();
    const id = await queued(tenant.id, tenant.tokenId, 'inactive-tenant');
    const setActive = async (active: boolean) => {
      const res = await ctx.request('PUT', `${ADMIN_API}/tenants/${tenant.id}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: { active },
      });
      assert.equal(res.status, 200, res.text);
    };
    await setActive(false);
    const instance = ctx.services();
    try {
      await instance.importJobs.resumeAll();
      // Its first step ran and found the tenant inactive: the import is as it was, not cancelled.
      await setTimeout(1_500);
      const waiting = await importRepository.find(ctx.db, tenant.id, id);
      assert.deepEqual({ status: waiting?.status, processed: waiting?.processed }, { status: 'queued', processed: 0 });
      const leads = await ctx.db.selectFrom('leads').select('id').where('tenantId', '=', tenant.id).execute();
      assert.deepEqual(leads, []);
      await setActive(true);
      const over = await importOver(ctx, tenant, id);
      assert.deepEqual({ status: over.status, created: over.created }, { status: 'succeeded', created: 2 });
    } finally {
      await instance.jobQueue.stop();
    }
  });
});
