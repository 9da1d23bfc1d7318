import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import {
  assertFieldError,
  DEFAULT_STATUSES,
  ISO_UTC_MS,
  LEAD_KEYS,
  LEAD_MESSAGE,
  LEAD_MESSAGE_EN,
  UUID,
} from './lead-fixtures.js';

describeEachBackend('POST /leads', (ctx) => {
  let tenant: TestTenant;
  const post = (body: unknown, headers?: Record<string, string>) =>
    ctx.request('POST', `${API}/leads`, { token: tenant.token, body, headers });
  /** A valid body with one field changed. */
  const withField = (field: string, value: unknown) =>
    post({ name: 'Maria', email: 'maria@example.com', [field]: value });
  const countLeads = async () =>
    Number(
      (
        await ctx.db
          .selectFrom('leads')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  before(async () => {
    tenant = await ctx.tenant();
  });

  it('creates a lead with defaults and every key of the full object (SPEC §3)', async () => {
    const res = await post({ name: '  Maria Silva ', email: ' Maria@Example.COM ' });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), LEAD_KEYS);
    assert.match(res.body._id, UUID);
    assert.deepEqual(
      { ...res.body, _id: null, createdAt: null, updatedAt: null },
      {
        _id: null,
        name: 'Maria Silva',
        email: 'maria@example.com',
        phone: null,
        source: null,
        // The tenant's first pipeline, whose id is the tenant's (SPEC §20).
        pipeline: tenant.id,
        status: 'new',
        score: 0,
        lastContact: null,
        notes: null,
        externalId: null,
        customerId: null,
        custom: {},
        tenant: tenant.id,
        createdBy: tenant.tokenId,
        createdAt: null,
        updatedAt: null,
      },
    );
    assert.match(res.body.createdAt, ISO_UTC_MS);
    assert.equal(res.body.updatedAt, res.body.createdAt);
    assert.ok(Math.abs(Date.parse(res.body.createdAt) - Date.now()) < 60_000, 'createdAt is the server clock');
  });

  it('stores every writable field as sent, trimmed where the rule says so (SPEC §3)', async () => {
    const res = await post({
      name: 'Ana',
      email: 'ana@example.com',
      phone: ' +55 11 91234-5678 ',
      source: ' website ',
      status: 'qualified',
      score: 100,
      lastContact: '2026-11-20T15:30:00.5+02:00',
      notes: '  keep my spaces  ',
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.phone, '+55 11 91234-5678');
    assert.equal(res.body.source, 'website');
    assert.equal(res.body.status, 'qualified');
    assert.equal(res.body.score, 100);
    assert.equal(res.body.lastContact, '2026-11-20T13:30:00.500Z');
    assert.equal(res.body.notes, '  keep my spaces  ');
    const stored = await ctx.db
      .selectFrom('leads')
      .select(['phone', 'source', 'notes'])
      .where('id', '=', res.body._id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored, { phone: '+55 11 91234-5678', source: 'website', notes: '  keep my spaces  ' });
  });

  it('accepts a phone without e-mail, and a score of 0 (SPEC §3)', async () => {
    const res = await post({ name: 'Só telefone', phone: '11 5555-0000', score: 0 });
    assert.equal(res.status, 201);
    assert.equal(res.body.email, null);
    assert.equal(res.body.phone, '11 5555-0000');
    assert.equal(res.body.score, 0);
  });

  it('treats "" and null as no value in optional string fields (SPEC §3)', async () => {
    const res = await post({
      name: 'Form',
      email: 'form@example.com',
      phone: '',
      source: null,
      notes: '',
      lastContact: null,
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.phone, null);
    assert.equal(res.body.source, null);
    assert.equal(res.body.notes, null);
    assert.equal(res.body.lastContact, null);
    const viaPhone = await post({ name: 'Form', email: '', phone: '123' });
    assert.equal(viaPhone.status, 201);
    assert.equal(viaPhone.body.email, null);
  });

  it('rejects a name that is missing or blank with the seed message (SPEC §2, §3)', async () => {
    const missing = await post({ email: 'a@example.com' });
    assertFieldError(missing, 'name');
    assert.equal(missing.body.error, LEAD_MESSAGE);
    const blank = await post({ name: '   ', email: 'a@example.com' });
    assertFieldError(blank, 'name');
    assert.equal(blank.body.error, LEAD_MESSAGE);
    const empty = await post({ name: '', email: 'a@example.com' });
    assert.equal(empty.body.error, LEAD_MESSAGE);
    assert.equal(empty.body.code, 'validation_failed');
  });

  it('rejects a lead without e-mail and phone with the seed message (SPEC §2)', async () => {
    for (const body of [{ name: 'x' }, { name: 'x', phone: '' }, { name: 'x', email: null, phone: '   ' }]) {
      const res = await post(body);
      assert.equal(res.status, 400);
      assert.equal(res.body.success, false);
      assert.equal(res.body.code, 'validation_failed');
      assert.equal(res.body.error, LEAD_MESSAGE);
      assert.deepEqual(
        res.body.details.map((d: { field: string }) => d.field),
        ['email', 'phone'],
      );
    }
  });

  it('gives the lead message in English with Accept-Language: en, same code (SPEC §2)', async () => {
    const noName = await post({ phone: '123' }, { 'accept-language': 'en-US,en;q=0.9' });
    assert.equal(noName.status, 400);
    assert.equal(noName.body.code, 'validation_failed');
    assert.equal(noName.body.error, LEAD_MESSAGE_EN);
    const noContact = await post({ name: 'x' }, { 'accept-language': 'en' });
    assert.equal(noContact.status, 400);
    assert.equal(noContact.body.code, 'validation_failed');
    assert.equal(noContact.body.error, LEAD_MESSAGE_EN);
  });

  it('limits name to 1–200 characters after trimming, counted in characters (SPEC §3)', async () => {
    assertFieldError(await post({ name: 'x'.repeat(201), email: 'a@example.com' }), 'name');
    assertFieldError(await post({ name: '😀'.repeat(201), email: 'a@example.com' }), 'name');
    const padded = await post({ name: `  ${'x'.repeat(200)}  `, email: 'a@example.com' });
    assert.equal(padded.status, 201);
    assert.equal(padded.body.name, 'x'.repeat(200));
    const emoji = await post({ name: '😀'.repeat(200), email: 'a@example.com' });
    assert.equal(emoji.status, 201);
    assert.equal(emoji.body.name, '😀'.repeat(200));
  });

  it('requires a valid e-mail of at most 254 characters (SPEC §3)', async () => {
    for (const bad of ['not-an-email', 'a@b', 'a b@example.com', '@example.com', 'maria@', 'a@@example.com']) {
      assertFieldError(await withField('email', bad), 'email', "Campo 'email': deve ser um e-mail válido.");
    }
    assertFieldError(await withField('email', `${'a'.repeat(243)}@example.com`), 'email');
    const longest = await withField('email', `  ${'A'.repeat(242)}@Example.com `);
    assert.equal(longest.status, 201);
    assert.equal(longest.body.email, `${'a'.repeat(242)}@example.com`);
  });

  it('limits phone to 50, source to 100 and notes to 10,000 characters (SPEC §3)', async () => {
    assertFieldError(await withField('phone', '1'.repeat(51)), 'phone');
    assertFieldError(await withField('source', 's'.repeat(101)), 'source');
    assertFieldError(await withField('notes', 'n'.repeat(10_001)), 'notes');
    const longest = await post({
      name: 'x',
      phone: '1'.repeat(50),
      source: 's'.repeat(100),
      notes: 'n'.repeat(10_000),
    });
    assert.equal(longest.status, 201);
    assert.equal(longest.body.phone, '1'.repeat(50));
    assert.equal(longest.body.source, 's'.repeat(100));
    assert.equal(longest.body.notes, 'n'.repeat(10_000));
  });

  it('rejects a status outside the list, naming the allowed values (SPEC §3)', async () => {
    for (const bad of ['closed', 'NEW', '', null, 1]) {
      assertFieldError(await withField('status', bad), 'status');
    }
    assertFieldError(
      await withField('status', 'closed'),
      'status',
      `Campo 'status': deve ser um de: ${DEFAULT_STATUSES}.`,
    );
    for (const status of ['contacted', 'negotiation', 'won', 'lost']) {
      const res = await withField('status', status);
      assert.equal(res.status, 201);
      assert.equal(res.body.status, status);
    }
  });

  it('takes score only as an integer 0–100, never coerced (SPEC §3)', async () => {
    for (const bad of ['10', 10.5, 101, -1, null, true]) {
      assertFieldError(await withField('score', bad), 'score');
    }
    const res = await withField('score', 37);
    assert.equal(res.status, 201);
    assert.equal(res.body.score, 37);
  });

  it('takes lastContact as an ISO 8601 timestamp and answers it in UTC with milliseconds (SPEC §1.5, §3)', async () => {
    const res = await withField('lastContact', '2026-11-20T15:30:00-03:00');
    assert.equal(res.status, 201);
    assert.equal(res.body.lastContact, '2026-11-20T18:30:00.000Z');
    for (const bad of [
      'yesterday',
      '2026-11-20',
      '2026-13-01T00:00:00Z',
      '2026-02-30T10:00:00Z',
      '2026-11-20T25:00:00Z',
      1_700_000_000_000,
    ]) {
      assertFieldError(await withField('lastContact', bad), 'lastContact');
    }
  });

  it('answers a leap-second lastContact, which no Date can hold, with a 400 and not a 500 (SPEC §2)', async () => {
    assertFieldError(await withField('lastContact', '2026-06-30T23:59:60Z'), 'lastContact');
  });

  it('rejects wrong types in string fields (SPEC §3)', async () => {
    assertFieldError(await post({ name: 42, email: 'a@example.com' }), 'name');
    assertFieldError(await withField('email', 42), 'email');
    assertFieldError(await withField('phone', 5551234), 'phone');
    assertFieldError(await withField('source', ['web']), 'source');
    assertFieldError(await withField('notes', { text: 'x' }), 'notes');
  });

  it('rejects a body that is not a JSON object (SPEC §2)', async () => {
    for (const raw of ['[]', 'null', '"lead"', '42']) {
      const res = await post(raw);
      assert.equal(res.status, 400, raw);
      assert.equal(res.body.code, 'validation_failed');
    }
    const malformed = await post('{"name": "x",');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.code, 'validation_failed');
  });

  it('rejects an unknown field, naming it in details (SPEC §3)', async () => {
    const res = await withField('company', 'ACME');
    assertFieldError(res, 'company', "Campo 'company': campo desconhecido.");
  });

  it('ignores read-only fields in the body and answers the server values (SPEC §3)', async () => {
    const other = await ctx.tenant('Other');
    const before = await countLeads();
    const res = await post({
      name: 'Echo',
      email: 'echo@example.com',
      _id: '01900000-0000-7000-8000-000000000001',
      id: 'my-own-id',
      tenant: other.id,
      createdBy: other.tokenId,
      createdAt: '2000-01-01T00:00:00.000Z',
      updatedAt: '2000-01-01T00:00:00.000Z',
    });
    assert.equal(res.status, 201);
    assert.notEqual(res.body._id, '01900000-0000-7000-8000-000000000001');
    assert.match(res.body._id, UUID);
    assert.equal(res.body.tenant, tenant.id);
    assert.equal(res.body.createdBy, tenant.tokenId);
    assert.ok(res.body.createdAt > '2020', res.body.createdAt);
    assert.equal(res.body.updatedAt, res.body.createdAt);
    assert.equal(await countLeads(), before + 1);
  });

  it('sets createdBy to the id of the token that created the lead (SPEC §3)', async () => {
    const writer = await ctx.token(tenant.id, ['leads:write']);
    const res = await ctx.request('POST', `${API}/leads`, {
      token: writer.token,
      body: { name: 'Via writer', phone: '1' },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.createdBy, writer.id);
    assert.equal(res.body.tenant, tenant.id);
  });

  it('gives every lead its own UUID (SPEC §1.5)', async () => {
    const a = await post({ name: 'Same', email: 'same@example.com' });
    const b = await post({ name: 'Same', email: 'same@example.com' });
    assert.equal(a.status, 201);
    assert.equal(b.status, 201, 'lead e-mails are not unique (SPEC §3)');
    assert.match(a.body._id, UUID);
    assert.match(b.body._id, UUID);
    assert.notEqual(a.body._id, b.body._id);
  });
});

describeEachBackend(
  'POST /leads with FUNIL_LEAD_STATUSES',
  (ctx) => {
    let tenant: TestTenant;
    before(async () => {
      tenant = await ctx.tenant();
    });

    it('defaults to the first configured status (SPEC §3)', async () => {
      const res = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'x', phone: '1' } });
      assert.equal(res.status, 201);
      assert.equal(res.body.status, 'a');
    });

    it('accepts only the configured statuses, on create and on the status route (SPEC §3)', async () => {
      const refused = await ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        body: { name: 'x', phone: '1', status: 'new' },
      });
      assertFieldError(refused, 'status', "Campo 'status': deve ser um de: a, b, c.");
      const created = await ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        body: { name: 'x', phone: '1', status: 'c' },
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.status, 'c');
      const moved = await ctx.request('PUT', `${API}/leads/${created.body._id}/status`, {
        token: tenant.token,
        body: { status: 'b' },
      });
      assert.equal(moved.status, 200);
      assert.equal(moved.body.status, 'b');
      const qualified = await ctx.request('PUT', `${API}/leads/${created.body._id}/status`, {
        token: tenant.token,
        body: { status: 'qualified' },
      });
      assertFieldError(qualified, 'status', "Campo 'status': deve ser um de: a, b, c.");
      const updated = await ctx.request('PUT', `${API}/leads/${created.body._id}`, {
        token: tenant.token,
        body: { status: 'new' },
      });
      assertFieldError(updated, 'status');
    });
  },
  { FUNIL_LEAD_STATUSES: 'a,b,c' },
);
