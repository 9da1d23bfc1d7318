import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import {
  assertInvalidField,
  assertValidationFailed,
  CUSTOMER_KEYS,
  CUSTOMERS,
  createCustomer,
  ISO_MS,
  uniqueEmail,
} from './customer-fixtures.js';

describeEachBackend('POST /customers', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;
  before(async () => {
    tenant = await ctx.tenant('A');
    other = await ctx.tenant('B');
  });

  const post = (body: unknown, headers?: Record<string, string>) =>
    ctx.request('POST', CUSTOMERS, { token: tenant.token, body, headers });

  it('creates a customer with every key of the object and the defaults (seed §2.2, SPEC §4)', async () => {
    const res = await post({ name: 'Maria Silva', email: 'maria.defaults@example.com' });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), CUSTOMER_KEYS);
    assert.match(res.body._id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(res.body.id, res.body._id);
    assert.match(res.body.createdAt, ISO_MS);
    assert.equal(res.body.updatedAt, res.body.createdAt);
    const { _id, id, createdAt, updatedAt, ...rest } = res.body;
    assert.deepEqual(rest, {
      firstName: 'Maria',
      lastName: 'Silva',
      name: 'Maria Silva',
      email: 'maria.defaults@example.com',
      phone: null,
      status: 'active',
      type: 'individual',
      value: 0,
      autoPayment: false,
      notes: null,
      externalId: null,
      custom: {},
    });
  });

  it('stores every writable field as given (SPEC §4: POST accepts every writable field)', async () => {
    const res = await post({
      name: 'Empresa X Ltda',
      email: 'contato@empresa-x.com.br',
      firstName: 'Empresa',
      lastName: 'X',
      phone: '+55 11 99999-0000',
      status: 'blocked',
      type: 'company',
      value: 1234.5,
      autoPayment: true,
      notes: 'Cliente desde 2020.',
      externalId: 'erp-42',
    });
    assert.equal(res.status, 201);
    const { _id, id, createdAt, updatedAt, ...rest } = res.body;
    assert.deepEqual(rest, {
      firstName: 'Empresa',
      lastName: 'X',
      name: 'Empresa X Ltda',
      email: 'contato@empresa-x.com.br',
      phone: '+55 11 99999-0000',
      status: 'blocked',
      type: 'company',
      value: 1234.5,
      autoPayment: true,
      notes: 'Cliente desde 2020.',
      externalId: 'erp-42',
      custom: {},
    });
  });

  it('requires name: missing, blank or null is a 400 naming it (seed §4.2 rule 2)', async () => {
    assertInvalidField(await post({ email: uniqueEmail() }), 'name');
    assertInvalidField(await post({ name: '   ', email: uniqueEmail() }), 'name');
    assertInvalidField(await post({ name: null, email: uniqueEmail() }), 'name');
    assertInvalidField(await post({ name: '', email: uniqueEmail() }), 'name');
  });

  it('requires email: missing, empty or null is a 400 naming it (seed §4.2 rule 2)', async () => {
    const message = assertInvalidField(await post({ name: 'Ana' }), 'email');
    assert.equal(message, "Campo 'email': é obrigatório.");
    assertInvalidField(await post({ name: 'Ana', email: '' }), 'email');
    assertInvalidField(await post({ name: 'Ana', email: '  ' }), 'email');
    assertInvalidField(await post({ name: 'Ana', email: null }), 'email');
  });

  it('trims name and takes 1–200 characters (SPEC §4)', async () => {
    const longest = 'n'.repeat(200);
    const ok = await post({ name: `  ${longest}  `, email: uniqueEmail() });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.name, longest);
    const message = assertInvalidField(await post({ name: 'n'.repeat(201), email: uniqueEmail() }), 'name');
    assert.equal(message, "Campo 'name': deve ter no máximo 200 caracteres.");
    assertInvalidField(await post({ name: 42, email: uniqueEmail() }), 'name');
    // Characters, not UTF-16 units: 200 emoji fit, 201 do not.
    assert.equal((await createCustomer(ctx, tenant.token, { name: '😀'.repeat(200) })).name, '😀'.repeat(200));
    assertInvalidField(await post({ name: '😀'.repeat(201), email: uniqueEmail() }), 'name');
  });

  it('trims and lower-cases the e-mail (SPEC §4)', async () => {
    const res = await post({ name: 'Ana', email: '  Ana.Case@Example.COM ' });
    assert.equal(res.status, 201);
    assert.equal(res.body.email, 'ana.case@example.com');
  });

  it('rejects an invalid e-mail (SPEC §4)', async () => {
    for (const email of ['not-an-email', 'a@b', 'a b@example.com', 'a@@example.com', 'ana@example.com x']) {
      const message = assertInvalidField(await post({ name: 'Ana', email }), 'email');
      assert.equal(message, "Campo 'email': deve ser um e-mail válido.", email);
    }
    assertInvalidField(await post({ name: 'Ana', email: 12 }), 'email');
  });

  it('takes an e-mail of up to 254 characters (SPEC §4)', async () => {
    const domain = '@example.com';
    const longest = `${'a'.repeat(254 - domain.length)}${domain}`;
    const ok = await post({ name: 'Ana', email: longest.toUpperCase() });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.email, longest);
    assertInvalidField(await post({ name: 'Ana', email: `b${longest}` }), 'email');
  });

  it('derives firstName / lastName from name: first word / the rest (SPEC §4)', async () => {
    const three = await createCustomer(ctx, tenant.token, { name: '  Ana   Maria  Souza ' });
    assert.equal(three.name, 'Ana   Maria  Souza');
    assert.equal(three.firstName, 'Ana');
    assert.equal(three.lastName, 'Maria Souza');

    const single = await createCustomer(ctx, tenant.token, { name: 'Madonna' });
    assert.equal(single.firstName, 'Madonna');
    assert.equal(single.lastName, null);
  });

  it('derives only the part that is not given (SPEC §4)', async () => {
    const firstOnly = await createCustomer(ctx, tenant.token, { name: 'Ana Maria Souza', firstName: 'Aninha' });
    assert.deepEqual(
      [firstOnly.name, firstOnly.firstName, firstOnly.lastName],
      ['Ana Maria Souza', 'Aninha', 'Maria Souza'],
    );
    const lastOnly = await createCustomer(ctx, tenant.token, { name: 'Ana Maria Souza', lastName: 'Souza' });
    assert.deepEqual([lastOnly.name, lastOnly.firstName, lastOnly.lastName], ['Ana Maria Souza', 'Ana', 'Souza']);
  });

  it('cuts a derived first word of more than 100 characters to 100 (SPEC §4: firstName ≤ 100)', async () => {
    const word = 'x'.repeat(150);
    const res = await createCustomer(ctx, tenant.token, { name: `${word} Souza` });
    assert.equal(res.name, `${word} Souza`);
    assert.equal(res.firstName, 'x'.repeat(100));
    assert.equal(res.lastName, 'Souza');
  });

  it('limits firstName and lastName to 100 characters (SPEC §4)', async () => {
    const ok = await createCustomer(ctx, tenant.token, { firstName: 'f'.repeat(100), lastName: 'l'.repeat(100) });
    assert.equal(ok.firstName, 'f'.repeat(100));
    assert.equal(ok.lastName, 'l'.repeat(100));
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), firstName: 'f'.repeat(101) }), 'firstName');
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), lastName: 'l'.repeat(101) }), 'lastName');
  });

  it('limits phone to 50 characters, trimmed (SPEC §4)', async () => {
    const ok = await createCustomer(ctx, tenant.token, { phone: ` ${'9'.repeat(50)} ` });
    assert.equal(ok.phone, '9'.repeat(50));
    const message = assertInvalidField(
      await post({ name: 'Ana', email: uniqueEmail(), phone: '9'.repeat(51) }),
      'phone',
    );
    assert.equal(message, "Campo 'phone': deve ter no máximo 50 caracteres.");
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), phone: 11999990000 }), 'phone');
  });

  it('takes status active, inactive or blocked and nothing else (SPEC §4)', async () => {
    for (const status of ['active', 'inactive', 'blocked']) {
      assert.equal((await createCustomer(ctx, tenant.token, { status })).status, status);
    }
    for (const status of ['deleted', 'ACTIVE', '', null, 1]) {
      const message = assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), status }), 'status');
      if (typeof status === 'string')
        assert.equal(message, "Campo 'status': deve ser um de: active, inactive, blocked.");
    }
  });

  it('takes type individual or company and nothing else (SPEC §4)', async () => {
    assert.equal((await createCustomer(ctx, tenant.token, { type: 'company' })).type, 'company');
    assert.equal((await createCustomer(ctx, tenant.token, { type: 'individual' })).type, 'individual');
    const message = assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), type: 'partner' }), 'type');
    assert.equal(message, "Campo 'type': deve ser um de: individual, company.");
    const en = await post({ name: 'Ana', email: uniqueEmail(), type: 'partner' }, { 'accept-language': 'en' });
    assert.equal(assertInvalidField(en, 'type'), "Field 'type': must be one of: individual, company.");
  });

  it('stores value with up to 2 decimals exactly (SPEC §4)', async () => {
    for (const value of [0.07, 19.99, 0.1, 1_000_000.01, 999_999_999_999.99]) {
      const created = await createCustomer(ctx, tenant.token, { value });
      assert.equal(created.value, value);
      const read = await ctx.request('GET', `${CUSTOMERS}/${created._id}`, { token: tenant.token });
      assert.equal(read.body.value, value);
    }
  });

  it('rejects a value with more than 2 decimals, negative, not a number, or too large (SPEC §4)', async () => {
    const decimals = assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), value: 0.001 }), 'value');
    assert.equal(decimals, "Campo 'value': deve ter no máximo 2 casas decimais.");
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), value: 19.999 }), 'value');
    // Past multipleOf's float tolerance: these would otherwise be rounded to 0 and 5 without a word.
    for (const value of [1e-12, 5.000000000001]) {
      const message = assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), value }), 'value');
      assert.equal(message, "Campo 'value': deve ter no máximo 2 casas decimais.", String(value));
    }
    const negative = assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), value: -1 }), 'value');
    assert.equal(negative, "Campo 'value': deve ser no mínimo 0.");
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), value: -0.01 }), 'value');
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), value: '10' }), 'value');
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), value: null }), 'value');
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), value: 1_000_000_000_000 }), 'value');
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), value: 1e308 }), 'value');
  });

  it('rejects a value that overflows a double (raw 1e400) with a 400, not a 500 (SPEC §2)', async () => {
    const res = await post(`{"name":"Ana","email":"${uniqueEmail()}","value":1e400}`);
    assertValidationFailed(res);
  });

  it('takes autoPayment only as a JSON boolean (SPEC §3 strict types, §4)', async () => {
    assert.equal((await createCustomer(ctx, tenant.token, { autoPayment: true })).autoPayment, true);
    assert.equal((await createCustomer(ctx, tenant.token, { autoPayment: false })).autoPayment, false);
    for (const autoPayment of ['true', 1, 0, null, 'false']) {
      const message = assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), autoPayment }), 'autoPayment');
      assert.equal(message, "Campo 'autoPayment': deve ser do tipo booleano.");
    }
  });

  it('takes notes of up to 10,000 characters (SPEC §4)', async () => {
    const notes = 'ç'.repeat(10_000);
    assert.equal((await createCustomer(ctx, tenant.token, { notes })).notes, notes);
    const message = assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), notes: `${notes}x` }), 'notes');
    assert.equal(message, "Campo 'notes': deve ter no máximo 10000 caracteres.");
  });

  it('reads "" and null as no value for optional strings (SPEC §3)', async () => {
    const empty = await createCustomer(ctx, tenant.token, { phone: '', notes: '' });
    assert.equal(empty.phone, null);
    assert.equal(empty.notes, null);
    const nulls = await createCustomer(ctx, tenant.token, { phone: null, notes: null });
    assert.equal(nulls.phone, null);
    assert.equal(nulls.notes, null);
    const blank = await createCustomer(ctx, tenant.token, { phone: '   ' });
    assert.equal(blank.phone, null);
  });

  it('rejects an unknown field, naming it (SPEC §3)', async () => {
    const res = await post({ name: 'Ana', email: uniqueEmail(), vip: true });
    assert.equal(assertInvalidField(res, 'vip'), "Campo 'vip': campo desconhecido.");
    assertInvalidField(await post({ name: 'Ana', email: uniqueEmail(), tenant: other.id }), 'tenant');
  });

  it('ignores the read-only fields _id, id, createdAt, updatedAt (SPEC §3)', async () => {
    const sentId = '0190f0d0-1111-7000-8000-000000000001';
    const before = Date.now();
    const res = await post({
      _id: sentId,
      id: sentId,
      createdAt: '2000-01-01T00:00:00.000Z',
      updatedAt: '2000-01-01T00:00:00.000Z',
      name: 'Ana',
      email: uniqueEmail(),
    });
    assert.equal(res.status, 201);
    assert.notEqual(res.body._id, sentId);
    assert.equal(res.body.id, res.body._id);
    assert.ok(Date.parse(res.body.createdAt) >= before - 1000, res.body.createdAt);
    assert.ok(Date.parse(res.body.updatedAt) >= before - 1000, res.body.updatedAt);
  });

  it('stores SQL-injection text verbatim (SPEC §2: never SQL in answers)', async () => {
    const name = "Robert'); DROP TABLE customers;--";
    const notes = "' OR '1'='1'; SELECT * FROM api_tokens; --";
    const email = "o'brien+x@example.com";
    const created = await createCustomer(ctx, tenant.token, { name, notes, email, phone: "1' OR 1=1 --" });
    assert.deepEqual([created.name, created.notes, created.email, created.phone], [name, notes, email, "1' OR 1=1 --"]);
    const read = await ctx.request('GET', `${CUSTOMERS}/${created._id}`, { token: tenant.token });
    assert.deepEqual(read.body, created);
    const listed = await ctx.request('GET', CUSTOMERS, { token: tenant.token, query: { limit: '1000' } });
    assert.equal(listed.status, 200);
    assert.ok(listed.body.some((c: { _id: string }) => c._id === created._id));
  });

  it('rejects a NUL character in any string field with a 400, not a 500 (SPEC §2)', async () => {
    for (const field of ['name', 'phone', 'notes', 'firstName', 'lastName']) {
      const res = await post({ name: 'Ana', email: uniqueEmail(), [field]: 'a\u0000b' });
      assertValidationFailed(res);
    }
    assertValidationFailed(await post({ name: 'Ana', email: `a\u0000${uniqueEmail()}` }));
  });

  it('rejects a prototype-pollution body with a 400 (SPEC §2)', async () => {
    assertValidationFailed(await post('{"constructor":{"prototype":{}}}'));
    assertValidationFailed(
      await post(`{"name":"Ana","email":"${uniqueEmail()}","constructor":{"prototype":{"isAdmin":true}}}`),
    );
    assertValidationFailed(await post(`{"name":"Ana","email":"${uniqueEmail()}","__proto__":{"isAdmin":true}}`));
    assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
  });

  it('rejects bodies that are not a JSON object (SPEC §2)', async () => {
    assertValidationFailed(await post('{"name":"Ana",'));
    assertValidationFailed(await post('[]'));
    assertValidationFailed(await post('null'));
    assertValidationFailed(await post('"Ana"'));
  });

  it('refuses a second customer with the same e-mail in any case: 409 with existingId (SPEC §4, §2)', async () => {
    const first = await createCustomer(ctx, tenant.token, { email: 'ana@x.com' });
    const res = await post({ name: 'Outra Ana', email: 'ANA@X.COM' });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, {
      success: false,
      error: 'Já existe um cliente com este e-mail.',
      code: 'conflict',
      existingId: first._id,
    });
    const rows = await ctx.db.selectFrom('customers').select('id').where('email', '=', 'ana@x.com').execute();
    assert.equal(rows.length, 1);
  });

  it('keeps existingId from a token that may write customers but not read them (SPEC §2, §5.2)', async () => {
    const first = await createCustomer(ctx, tenant.token, { email: 'writeonly@x.com' });
    const writeOnly = await ctx.token(tenant.id, ['customers:write']);
    const create = await ctx.request('POST', CUSTOMERS, {
      token: writeOnly.token,
      body: { name: 'Outra', email: 'writeonly@x.com' },
    });
    assert.equal(create.status, 409);
    assert.deepEqual(create.body, { success: false, error: 'Já existe um cliente com este e-mail.', code: 'conflict' });
    const second = await createCustomer(ctx, tenant.token, { email: 'second@x.com' });
    const update = await ctx.request('PUT', `${CUSTOMERS}/${second._id}`, {
      token: writeOnly.token,
      body: { email: 'WriteOnly@x.com' },
    });
    assert.equal(update.status, 409);
    assert.equal('existingId' in update.body, false);
    // The same conflict, for a token that reads too, names the holder.
    const reader = await ctx.request('PUT', `${CUSTOMERS}/${second._id}`, {
      token: tenant.token,
      body: { email: 'writeonly@x.com' },
    });
    assert.equal(reader.body.existingId, first._id);
  });

  it('lets another tenant use the same e-mail (SPEC §4: unique per tenant)', async () => {
    await createCustomer(ctx, tenant.token, { email: 'shared@x.com' });
    const res = await ctx.request('POST', CUSTOMERS, {
      token: other.token,
      body: { name: 'Ana B', email: 'Shared@X.com' },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.email, 'shared@x.com');
  });

  it('lets exactly one of 10 parallel creates with one e-mail win; the rest get 409 (SPEC §4)', async () => {
    const email = uniqueEmail('race');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        ctx.request('POST', CUSTOMERS, { token: tenant.token, body: { name: `Racer ${i}`, email } }),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    const conflicts = answers.filter((a) => a.status === 409);
    assert.equal(created.length, 1, JSON.stringify(answers.map((a) => a.status)));
    assert.equal(conflicts.length, 9);
    for (const answer of conflicts) {
      assert.equal(answer.body.code, 'conflict');
      assert.equal(answer.body.existingId, created[0]?.body._id);
    }
  });
});
