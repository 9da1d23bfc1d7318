import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { exportRepository } from '../../src/exports/export.repository.js';
import { ExportRuns } from '../../src/exports/export-runs.js';
import { assertError, assertForbidden, assertInvalidField } from '../helpers/assert-error.js';
import { define, fieldBody } from '../helpers/custom-fields.js';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { uniqueEmail } from '../helpers/unique.js';
import { waitFor } from '../helpers/wait-for.js';
import { csvObjects, exported, fileOf, parseCsv, queuedExport } from './export-fixtures.js';

describeEachBackend('exports (SPEC §23)', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;

  const newLead = async (body: Record<string, unknown>, who = tenant) => {
    const res = await ctx.api(who, 'POST', '/leads', { body: { name: 'Lead', email: uniqueEmail('x'), ...body } });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };

  before(async () => {
    tenant = await ctx.tenant();
    other = await ctx.tenant();
    await define(ctx, tenant, fieldBody('plan', { type: 'select', options: ['basic', 'pro'] }));
    await define(ctx, tenant, fieldBody('tags', { type: 'multiselect', options: ['a', 'b,c', 'd"e'] }));
    for (let i = 0; i < 30; i++) {
      await newLead({
        name: `Lead ${String(i).padStart(2, '0')}`,
        status: i % 3 === 0 ? 'new' : 'contacted',
        score: i,
        custom: i % 2 === 0 ? { plan: 'pro', tags: ['a', 'b,c'] } : { plan: 'basic' },
      });
    }
  });

  it('a CSV parsed back gives the records the list gives for the same filters and sort, with or without gzip', async () => {
    const query = { status: 'new', sort: 'name', scoreMin: '3' };
    const id = await exported(ctx, tenant, { resource: 'lead', format: 'csv', query });
    const listed = await ctx.api(tenant, 'GET', '/leads', { query: { ...query, limit: '1000' } });
    const plain = await fileOf(ctx, tenant.token, id);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-type'], 'text/csv; charset=utf-8');
    assert.match(String(plain.headers['content-disposition']), /^attachment; filename="funil-leads-.+\.csv"$/);
    assert.equal(plain.headers['content-encoding'], undefined);
    const gzipped = await fileOf(ctx, tenant.token, id, true);
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.equal(gzipped.text, plain.text);
    const rows = csvObjects(plain.text);
    assert.deepEqual(
      rows.map((row) => [row._id, row.name, row.email, row.status, Number(row.score), row.createdAt]),
      listed.body.map((lead: Record<string, unknown>) => [
        lead._id,
        lead.name,
        lead.email,
        lead.status,
        lead.score,
        lead.createdAt,
      ]),
    );
    const state = await ctx.api(tenant, 'GET', `/exports/${id}`);
    assert.equal(state.body.total, listed.body.length);
    assert.equal(state.body.processed, listed.body.length);
    assert.equal(state.body.fileBytes, Buffer.byteLength(plain.text));
    assert.ok(Date.parse(state.body.expiresAt) > Date.now() + 23 * 3600_000);
  });

  it('the header names API fields, custom ones as custom.<key>; a multiselect is a JSON array', async () => {
    const id = await exported(ctx, tenant, { resource: 'lead', format: 'csv', query: { 'custom.plan': 'pro' } });
    const [header = [], ...rows] = parseCsv((await fileOf(ctx, tenant.token, id)).text);
    const at = header.indexOf('custom.plan');
    assert.deepEqual(header.slice(at, at + 2), ['custom.plan', 'custom.tags'], 'in the place of `custom`');
    assert.ok(header.includes('phone') && header.includes('pipeline') && !header.includes('custom'));
    assert.equal(rows.length, 15);
    const objects = csvObjects((await fileOf(ctx, tenant.token, id)).text);
    assert.ok(objects.every((row) => row['custom.plan'] === 'pro'));
    assert.deepEqual(JSON.parse(objects[0]?.['custom.tags'] ?? ''), ['a', 'b,c']);
  });

  it('escapes cells that begin like a formula (=, +, -, @, tab, CR) with a quote; numbers stay numbers', async () => {
    const who = await ctx.tenant();
    const hostile = ['=HYPERLINK("http://x")', '+55 11 9999', '-2+3', '@SUM(A1)', '\tTab', '\rCR', 'plain'];
    for (const [i, notes] of hostile.entries()) await newLead({ name: `N${i}`, notes, score: i }, who);
    const id = await exported(ctx, who, {
      resource: 'lead',
      format: 'csv',
      fields: ['score', 'notes'],
      query: { sort: 'score' },
    });
    const rows = parseCsv((await fileOf(ctx, who.token, id)).text);
    assert.deepEqual(rows[0], ['score', 'notes']);
    assert.deepEqual(
      rows.slice(1).map((row) => row[1]),
      hostile.map((text) => (text === 'plain' ? text : `'${text}`)),
    );
    assert.deepEqual(
      rows.slice(1).map((row) => row[0]),
      hostile.map((_, i) => String(i)),
    );
  });

  it('NDJSON holds one API object per line, only the fields asked for', async () => {
    const id = await exported(ctx, tenant, {
      resource: 'lead',
      format: 'ndjson',
      query: { status: 'new', sort: '-score' },
      fields: ['_id', 'score', 'custom.plan'],
    });
    const file = await fileOf(ctx, tenant.token, id, true);
    assert.equal(file.headers['content-type'], 'application/x-ndjson');
    const lines = file.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(lines.length, 10);
    assert.deepEqual(Object.keys(lines[0]), ['_id', 'score', 'custom']);
    assert.deepEqual(
      lines.map((line) => line.score),
      [27, 24, 21, 18, 15, 12, 9, 6, 3, 0],
    );
    assert.deepEqual(lines[1].custom, { plan: 'pro' });
    const whole = await exported(ctx, tenant, { resource: 'lead', format: 'ndjson' });
    const first = JSON.parse((await fileOf(ctx, tenant.token, whole)).text.split('\n')[0] ?? '');
    const lead = await ctx.api(tenant, 'GET', `/leads/${first._id}`);
    assert.deepEqual(first, lead.body);
  });

  it('exports customers with their own filters; an empty result is a file of its header', async () => {
    const who = await ctx.tenant();
    for (const type of ['company', 'individual', 'company']) {
      const res = await ctx.api(who, 'POST', '/customers', {
        body: { name: `C ${type}`, email: uniqueEmail('c'), type },
      });
      assert.equal(res.status, 201, res.text);
    }
    const id = await exported(ctx, who, { resource: 'customer', format: 'csv', query: { type: 'company' } });
    const rows = csvObjects((await fileOf(ctx, who.token, id)).text);
    assert.equal(rows.length, 2);
    assert.ok(rows.every((row) => row.type === 'company' && row.autoPayment === 'false' && row.value === '0'));
    const none = await exported(ctx, who, { resource: 'customer', format: 'csv', query: { q: 'nobody-here' } });
    const empty = await fileOf(ctx, who.token, none, true);
    assert.equal(parseCsv(empty.text).length, 1);
    const nothing = await exported(ctx, who, { resource: 'lead', format: 'ndjson' });
    assert.equal((await fileOf(ctx, who.token, nothing, true)).text, '');
  });

  it("needs the resource's read scope: a write-only and a customers-only token get 403 on every route", async () => {
    const id = await exported(ctx, tenant, { resource: 'lead', format: 'csv' });
    for (const scopes of [['leads:write'], ['customers:read']] as const) {
      const { token } = await ctx.token(tenant.id, [...scopes]);
      const as = { ...tenant, token };
      assertForbidden(await ctx.api(as, 'POST', '/exports', { body: { resource: 'lead', format: 'csv' } }));
      const invalid = { resource: 'lead', format: 'xlsx', fields: ['nope'] };
      // A 403 before a 400 (SPEC §2's order).
      assertForbidden(await ctx.api(as, 'POST', '/exports', { body: invalid }));
      assertForbidden(await ctx.api(as, 'GET', `/exports/${id}`));
      assertForbidden(await ctx.api(as, 'GET', `/exports/${id}/file`));
    }
    const { token } = await ctx.token(tenant.id, ['leads:read']);
    assert.equal((await fileOf(ctx, token, id)).status, 200);
  });

  it("another tenant's export is a 404 on every route, as is an id that is not a UUID", async () => {
    const id = await exported(ctx, tenant, { resource: 'lead', format: 'csv' });
    assertError(await ctx.api(other, 'GET', `/exports/${id}`), 404, 'not_found');
    assertError(await ctx.api(other, 'GET', `/exports/${id}/file`), 404, 'not_found');
    assertError(await ctx.api(other, 'GET', '/exports/not-a-uuid/file'), 404, 'not_found');
  });

  it('checks everything up front with the list’s own rules: 400s naming the field, never a 500', async () => {
    const post = (body: unknown) => ctx.api(tenant, 'POST', '/exports', { body });
    const lead = { resource: 'lead', format: 'csv' };
    assertInvalidField(await post({ ...lead, fields: ['name', 'password'] }), 'fields.1');
    assertInvalidField(await post({ ...lead, fields: ['custom.nope'] }), 'fields.0');
    assertInvalidField(await post({ ...lead, fields: ['constructor'] }), 'fields.0');
    assertInvalidField(await post({ ...lead, fields: Array.from({ length: 5000 }, (_, i) => `f${i}`) }), 'fields');
    assertInvalidField(await post({ ...lead, query: { sort: 'password' } }), 'query.sort');
    assertInvalidField(await post({ ...lead, query: { status: 'nonsense' } }), 'query.status');
    assertInvalidField(await post({ ...lead, query: { scoreMin: 'ten' } }), 'query.scoreMin');
    assertInvalidField(await post({ ...lead, query: { scoreMin: 9, scoreMax: 2 } }), 'query.scoreMin');
    assertInvalidField(await post({ ...lead, query: { 'custom.nope': 'x' } }), 'query.custom.nope');
    assertInvalidField(await post({ ...lead, query: { limit: 5 } }), 'query.limit');
    assertInvalidField(await post({ ...lead, query: { constructor: 'x' } }), 'query.constructor');
    assertInvalidField(await post({ ...lead, query: { type: 'company' } }), 'query.type');
    assertInvalidField(
      await post({ ...lead, query: { createdSince: "'; drop table leads; --" } }),
      'query.createdSince',
    );
    assertInvalidField(await post({ resource: 'lead', format: 'xlsx' }), 'format');
    const polluted = await ctx.api(tenant, 'POST', '/exports', {
      body: '{"resource":"lead","format":"csv","query":{"__proto__":{"admin":true}}}',
    });
    assertError(polluted, 400, 'validation_failed', { details: 'maybe' });
    const injected = await post({ ...lead, query: { q: "x' or 1=1; --" } });
    assert.equal(injected.status, 202, injected.text);
    assert.equal(({} as Record<string, unknown>).admin, undefined);
  });

  it('the file is a 409 until the export has succeeded', async () => {
    const id = '0190a000-0000-7000-8000-000000000001';
    await sql`insert into exports (tenant_id, id, resource, format) values (${tenant.id}, ${id}, 'lead', 'csv')`.execute(
      ctx.db,
    );
    assert.equal((await ctx.api(tenant, 'GET', `/exports/${id}`)).body.status, 'queued');
    assertError(await ctx.api(tenant, 'GET', `/exports/${id}/file`), 409, 'conflict');
    await sql`delete from exports where id = ${id}`.execute(ctx.db);
  });

  it('24 hours after it is made the file is deleted: the export shows expired and its file is a 410', async () => {
    const id = await exported(ctx, tenant, { resource: 'lead', format: 'csv' });
    const runs = ctx.services().exportRuns;
    assert.ok((await runs.sweep(new Date(Date.now() + 25 * 3600_000))) >= 1);
    assert.equal((await ctx.api(tenant, 'GET', `/exports/${id}`)).body.status, 'expired');
    assertError(await ctx.api(tenant, 'GET', `/exports/${id}/file`), 410, 'export_expired');
    const { rows } = await sql`select 1 from export_chunks where export_id = ${id}`.execute(ctx.db);
    assert.equal(rows.length, 0);
  });

  it('erasing a person deletes the files of every export of the tenant (SPEC §17)', async () => {
    const who = await ctx.tenant();
    const email = uniqueEmail('erased');
    await newLead({ name: 'To erase', email }, who);
    const leadsFile = await exported(ctx, who, { resource: 'lead', format: 'csv' });
    const customersFile = await exported(ctx, who, { resource: 'customer', format: 'ndjson' });
    assert.match((await fileOf(ctx, who.token, leadsFile)).text, new RegExp(email));
    const kept = await exported(ctx, tenant, { resource: 'lead', format: 'csv' });
    const erased = await ctx.api(who, 'POST', '/personal-data/erase', { body: { email } });
    assert.equal(erased.status, 200, erased.text);
    for (const id of [leadsFile, customersFile]) {
      assert.equal((await ctx.api(who, 'GET', `/exports/${id}`)).body.status, 'expired');
      assertError(await ctx.api(who, 'GET', `/exports/${id}/file`), 410, 'export_expired');
    }
    const { rows } = await sql`select 1 from export_chunks where tenant_id = ${who.id}`.execute(ctx.db);
    assert.equal(rows.length, 0);
    assert.equal((await fileOf(ctx, tenant.token, kept)).status, 200, "another tenant's exports stay");
  });

  it('an export cut short (a crash left it running, with chunks) starts over at the next start and finishes', async () => {
    const id = '0190a000-0000-7000-8000-000000000002';
    await sql`insert into exports (tenant_id, id, resource, format, status, processed, runs)
      values (${tenant.id}, ${id}, 'lead', 'csv', 'running', 500, 1)`.execute(ctx.db);
    await sql`insert into export_chunks (tenant_id, export_id, seq, data)
      values (${tenant.id}, ${id}, 0, 'partial'::bytea), (${tenant.id}, ${id}, 7, 'stale'::bytea)`.execute(ctx.db);
    const runs = ctx.services().exportRuns;
    await runs.resumeAll();
    const done = await waitFor(async () => {
      const state = await ctx.api(tenant, 'GET', `/exports/${id}`);
      return state.body.status === 'succeeded' ? state.body : undefined;
    });
    await runs.stop();
    assert.equal(done.total, 30);
    const rows = csvObjects((await fileOf(ctx, tenant.token, id, true)).text);
    assert.equal(rows.length, 30);
  });

  it('an export stopped between two pages (a shutdown) is left running, and the next start finishes it', async () => {
    const created = await queuedExport(ctx, tenant, 'ndjson', ['score', '_id', 'score']);
    const { exportResources, catalog } = ctx.services();
    const silent = pino({ level: 'silent' });
    const first = new ExportRuns(ctx.database, exportResources, catalog, silent, 1);
    const running = first.start(tenant.id, created.id);
    // Polled back to back, not every 100 ms: the run takes 30 short pages.
    while (((await exportRepository.find(ctx.db, tenant.id, created.id))?.processed ?? 0) === 0);
    await first.stop();
    await running;
    const left = await exportRepository.find(ctx.db, tenant.id, created.id);
    assert.equal(left?.status, 'running');
    assert.ok((left?.processed ?? 0) < 30, 'stopped before its last page');
    const next = new ExportRuns(ctx.database, exportResources, catalog, silent, 7);
    await next.resumeAll();
    await waitFor(
      async () => (await exportRepository.find(ctx.db, tenant.id, created.id))?.status === 'succeeded' || undefined,
    );
    await next.stop();
    const lines = (await fileOf(ctx, tenant.token, created.id, true)).text.trimEnd().split('\n');
    assert.deepEqual(
      lines.map((line) => JSON.parse(line).score),
      Array.from({ length: 30 }, (_, i) => i),
    );
  });
});
