import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import {
  assertFieldError,
  createLead,
  DEFAULT_STATUSES,
  ISO_UTC_MS,
  LEAD_KEYS,
  readLead,
  tick,
} from './lead-fixtures.js';

const EMPTY_UPDATE = 'Informe ao menos um campo para atualizar.';
const CONTACT_REQUIRED = 'É necessário informar um e-mail ou telefone.';

describeEachBackend('PUT /leads/:id', (ctx) => {
  let tenant: TestTenant;
  const put = (id: string, body: unknown, headers?: Record<string, string>) =>
    ctx.request('PUT', `${API}/leads/${id}`, { token: tenant.token, body, headers });
  const fresh = (body: Record<string, unknown> = {}) => createLead(ctx, tenant.token, body);

  before(async () => {
    tenant = await ctx.tenant();
  });

  it('changes only the fields sent; updatedAt moves, createdAt does not (SPEC §3)', async () => {
    const lead = await fresh({
      phone: '1111',
      source: 'site',
      score: 10,
      notes: 'n',
      lastContact: '2026-01-01T00:00:00Z',
    });
    await tick();
    const res = await put(lead._id, { score: 55, source: ' fair ' });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), LEAD_KEYS);
    assert.deepEqual({ ...res.body, updatedAt: lead.updatedAt }, { ...lead, score: 55, source: 'fair' });
    assert.match(res.body.updatedAt, ISO_UTC_MS);
    assert.ok(res.body.updatedAt > (lead.updatedAt as string), `${res.body.updatedAt} > ${lead.updatedAt}`);
    assert.equal(res.body.createdAt, lead.createdAt);
    const read = await readLead(ctx, tenant.token, lead._id);
    assert.deepEqual(read.body, res.body);
  });

  it('applies the create rules to every field it changes (SPEC §3)', async () => {
    const lead = await fresh();
    const res = await put(lead._id, {
      name: '  Maria Souza ',
      email: ' Maria.Souza@Example.com',
      phone: ' 99 ',
      status: 'won',
      lastContact: '2026-11-20T15:30:00+02:00',
      notes: 'call back',
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Maria Souza');
    assert.equal(res.body.email, 'maria.souza@example.com');
    assert.equal(res.body.phone, '99');
    assert.equal(res.body.status, 'won');
    assert.equal(res.body.lastContact, '2026-11-20T13:30:00.000Z');
    assert.equal(res.body.notes, 'call back');
    assert.equal(res.body.createdBy, lead.createdBy);
    assert.equal(res.body.tenant, tenant.id);
  });

  it('clears optional fields sent as "" or null (SPEC §3)', async () => {
    const lead = await fresh({ phone: '1', source: 's', notes: 'n', lastContact: '2026-01-01T00:00:00Z' });
    const res = await put(lead._id, { phone: '', source: null, notes: '', lastContact: null });
    assert.equal(res.status, 200);
    assert.equal(res.body.phone, null);
    assert.equal(res.body.source, null);
    assert.equal(res.body.notes, null);
    assert.equal(res.body.lastContact, null);
    assert.equal(res.body.email, lead.email);
  });

  it('rejects an empty body (SPEC §3)', async () => {
    const lead = await fresh();
    const res = await put(lead._id, {});
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'validation_failed');
    assert.equal(res.body.error, EMPTY_UPDATE);
    const en = await put(lead._id, {}, { 'accept-language': 'en' });
    assert.equal(en.body.error, 'Send at least one field to update.');
  });

  it('rejects a body of read-only fields only, as it changes nothing (SPEC §3)', async () => {
    const lead = await fresh();
    const res = await put(lead._id, { _id: lead._id, createdAt: lead.createdAt, tenant: lead.tenant });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'validation_failed');
    assert.equal(res.body.error, EMPTY_UPDATE);
  });

  it('ignores read-only fields sent along with changes (SPEC §3)', async () => {
    const other = await ctx.tenant('Other');
    const lead = await fresh();
    const res = await put(lead._id, {
      ...lead,
      _id: '01900000-0000-7000-8000-000000000002',
      id: 'x',
      tenant: other.id,
      createdBy: other.tokenId,
      createdAt: '2000-01-01T00:00:00.000Z',
      name: 'Renamed',
    });
    assert.equal(res.status, 200);
    assert.equal(res.body._id, lead._id);
    assert.equal(res.body.tenant, tenant.id);
    assert.equal(res.body.createdBy, lead.createdBy);
    assert.equal(res.body.createdAt, lead.createdAt);
    assert.equal(res.body.name, 'Renamed');
  });

  it('refuses to clear the name (SPEC §3)', async () => {
    const lead = await fresh();
    for (const name of ['', '   ', null]) {
      assertFieldError(await put(lead._id, { name }), 'name');
    }
    assert.deepEqual((await readLead(ctx, tenant.token, lead._id)).body, lead);
  });

  it('refuses to clear the e-mail when the lead has no phone, and leaves it unchanged (SPEC §3)', async () => {
    const lead = await fresh({ phone: null });
    for (const email of ['', null, '  ']) {
      const res = await put(lead._id, { email, score: 90 });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'validation_failed');
      assert.equal(res.body.error, CONTACT_REQUIRED);
      assert.equal(res.body.details[0].field, 'email');
    }
    assert.deepEqual((await readLead(ctx, tenant.token, lead._id)).body, lead);
  });

  it('refuses to clear the phone of a lead that has no e-mail (SPEC §3)', async () => {
    const lead = await fresh({ email: null, phone: '1234' });
    const res = await put(lead._id, { phone: '' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'validation_failed');
    assert.equal(res.body.error, CONTACT_REQUIRED);
    assert.deepEqual((await readLead(ctx, tenant.token, lead._id)).body, lead);
  });

  it('clears the e-mail when the lead keeps a phone (SPEC §3)', async () => {
    const lead = await fresh({ phone: '1234' });
    const res = await put(lead._id, { email: '' });
    assert.equal(res.status, 200);
    assert.equal(res.body.email, null);
    assert.equal(res.body.phone, '1234');
  });

  it('swaps e-mail for phone in one request (SPEC §3: checked on the row as updated)', async () => {
    const lead = await fresh({ phone: null });
    const res = await put(lead._id, { email: null, phone: '5555' });
    assert.equal(res.status, 200);
    assert.equal(res.body.email, null);
    assert.equal(res.body.phone, '5555');
  });

  it('rejects wrong types and bad values without changing the lead (SPEC §3)', async () => {
    const lead = await fresh();
    const cases: [string, unknown][] = [
      ['score', '10'],
      ['score', 10.5],
      ['score', 101],
      ['score', -1],
      ['score', null],
      ['name', 7],
      ['name', 'x'.repeat(201)],
      ['email', 'not-an-email'],
      ['email', 5],
      ['phone', '1'.repeat(51)],
      ['source', 's'.repeat(101)],
      ['status', 'closed'],
      ['status', null],
      ['lastContact', 'tomorrow'],
      ['lastContact', '2026-06-30T23:59:60Z'],
      ['notes', 'n'.repeat(10_001)],
      ['notes', ['a']],
    ];
    for (const [field, value] of cases) {
      assertFieldError(await put(lead._id, { [field]: value }), field);
    }
    assertFieldError(await put(lead._id, { company: 'ACME' }), 'company', "Campo 'company': campo desconhecido.");
    assert.deepEqual((await readLead(ctx, tenant.token, lead._id)).body, lead);
  });
});

describeEachBackend('PUT /leads/:id/status', (ctx) => {
  let tenant: TestTenant;
  const putStatus = (id: string, body: unknown) =>
    ctx.request('PUT', `${API}/leads/${id}/status`, { token: tenant.token, body });

  before(async () => {
    tenant = await ctx.tenant();
  });

  it('moves the lead to the status sent and answers the full lead (seed §4.1)', async () => {
    const lead = await createLead(ctx, tenant.token, { phone: '1', score: 20 });
    await tick();
    const res = await putStatus(lead._id, { status: 'qualified' });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), LEAD_KEYS);
    assert.deepEqual({ ...res.body, updatedAt: lead.updatedAt }, { ...lead, status: 'qualified' });
    assert.ok(res.body.updatedAt > (lead.updatedAt as string));
    assert.equal(res.body.createdAt, lead.createdAt);
    assert.equal((await readLead(ctx, tenant.token, lead._id)).body.status, 'qualified');
  });

  it('allows any status to follow any other (seed §3.1)', async () => {
    const lead = await createLead(ctx, tenant.token, { status: 'won' });
    for (const status of ['new', 'lost', 'proposal', 'proposal']) {
      const res = await putStatus(lead._id, { status });
      assert.equal(res.status, 200);
      assert.equal(res.body.status, status);
    }
  });

  it('takes exactly {status}: any other field is a 400 (SPEC §3)', async () => {
    const lead = await createLead(ctx, tenant.token);
    assertFieldError(await putStatus(lead._id, { status: 'won', name: 'x' }), 'name');
    assertFieldError(await putStatus(lead._id, { status: 'won', score: 1 }), 'score');
    assertFieldError(await putStatus(lead._id, {}), 'status', "Campo 'status': é obrigatório.");
    assert.deepEqual((await readLead(ctx, tenant.token, lead._id)).body, lead);
  });

  it('rejects a status outside the list, listing the allowed values (SPEC §3)', async () => {
    const lead = await createLead(ctx, tenant.token);
    const message = `Campo 'status': deve ser um de: ${DEFAULT_STATUSES}.`;
    assertFieldError(await putStatus(lead._id, { status: 'closed' }), 'status', message);
    assertFieldError(await putStatus(lead._id, { status: '' }), 'status', message);
    assertFieldError(await putStatus(lead._id, { status: null }), 'status');
    assertFieldError(await putStatus(lead._id, { status: ['won'] }), 'status');
    const en = await ctx.request('PUT', `${API}/leads/${lead._id}/status`, {
      token: tenant.token,
      body: { status: 'closed' },
      headers: { 'accept-language': 'en' },
    });
    assert.equal(en.body.code, 'validation_failed');
    assert.equal(en.body.details[0].message, `Field 'status': must be one of: ${DEFAULT_STATUSES}.`);
    assert.equal((await readLead(ctx, tenant.token, lead._id)).body.status, 'new');
  });
});
