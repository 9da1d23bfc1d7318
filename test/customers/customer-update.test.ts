import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import {
  assertInvalidField,
  assertNotFound,
  assertValidationFailed,
  CUSTOMER_KEYS,
  CUSTOMERS,
  createCustomer,
  sleep,
  UNKNOWN_ID,
  uniqueEmail,
} from './customer-fixtures.js';

describeEachBackend('PUT /customers/:id', (ctx) => {
  let tenant: TestTenant;
  before(async () => {
    tenant = await ctx.tenant();
  });

  const put = (id: string, body: unknown, headers?: Record<string, string>) =>
    ctx.request('PUT', `${CUSTOMERS}/${id}`, { token: tenant.token, body, headers });
  const get = (id: string) => ctx.request('GET', `${CUSTOMERS}/${id}`, { token: tenant.token });

  it('changes only the fields sent and answers the full object (seed §4.2, SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token, { name: 'Ana Souza', phone: '111', value: 10 });
    const res = await put(customer._id, { phone: '222' });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), CUSTOMER_KEYS);
    assert.deepEqual(res.body, { ...customer, phone: '222', updatedAt: res.body.updatedAt });
    assert.deepEqual((await get(customer._id)).body, res.body);
  });

  it('accepts every writable field in one update (seed §4.2)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    const email = uniqueEmail();
    const res = await put(customer._id, {
      name: 'Empresa Y',
      email: email.toUpperCase(),
      firstName: 'Empresa',
      lastName: 'Y',
      phone: '333',
      status: 'inactive',
      type: 'company',
      value: 99.95,
      autoPayment: true,
      notes: 'Atualizado.',
      externalId: 'erp-99',
    });
    assert.equal(res.status, 200);
    const { _id, id, createdAt, updatedAt, ...rest } = res.body;
    assert.deepEqual(rest, {
      name: 'Empresa Y',
      email,
      firstName: 'Empresa',
      lastName: 'Y',
      phone: '333',
      status: 'inactive',
      type: 'company',
      value: 99.95,
      autoPayment: true,
      notes: 'Atualizado.',
      externalId: 'erp-99',
      custom: {},
    });
  });

  it('accepts notes on update (seed §2.2)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    const res = await put(customer._id, { notes: 'Prefere contato por e-mail.' });
    assert.equal(res.status, 200);
    assert.equal(res.body.notes, 'Prefere contato por e-mail.');
    const cleared = await put(customer._id, { notes: '' });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.notes, null);
  });

  it('rejects an empty object, and a body of only read-only fields (SPEC §4: partial, {} is a 400)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    const empty = await put(customer._id, {});
    assertValidationFailed(empty);
    assert.equal(empty.body.error, 'Informe ao menos um campo para atualizar.');
    const readOnly = await put(customer._id, { _id: customer._id, createdAt: customer.createdAt });
    assertValidationFailed(readOnly);
    assert.deepEqual((await get(customer._id)).body, customer);
  });

  it('refuses to clear name or email ("" or null is a 400) (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    for (const body of [{ name: '' }, { name: null }, { name: '  ' }]) {
      assertInvalidField(await put(customer._id, body), 'name');
    }
    for (const body of [{ email: '' }, { email: null }, { email: '  ' }]) {
      assertInvalidField(await put(customer._id, body), 'email');
    }
    assert.deepEqual((await get(customer._id)).body, customer);
  });

  it('applies the create field rules to updates (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    assertInvalidField(await put(customer._id, { value: 0.001 }), 'value');
    assertInvalidField(await put(customer._id, { value: 1e-12 }), 'value');
    assertInvalidField(await put(customer._id, { value: 5.000000000001 }), 'value');
    assertInvalidField(await put(customer._id, { value: -1 }), 'value');
    assertInvalidField(await put(customer._id, { value: '10' }), 'value');
    assertInvalidField(await put(customer._id, { autoPayment: 'true' }), 'autoPayment');
    assertInvalidField(await put(customer._id, { status: 'deleted' }), 'status');
    assertInvalidField(await put(customer._id, { type: 'partner' }), 'type');
    assertInvalidField(await put(customer._id, { email: 'nope' }), 'email');
    assertInvalidField(await put(customer._id, { name: 'n'.repeat(201) }), 'name');
    assertInvalidField(await put(customer._id, { firstName: 'f'.repeat(101) }), 'firstName');
    assertInvalidField(await put(customer._id, { phone: '9'.repeat(51) }), 'phone');
    assertInvalidField(await put(customer._id, { notes: 'x'.repeat(10_001) }), 'notes');
    assertInvalidField(await put(customer._id, { phone: '1', vip: true }), 'vip');
    assert.deepEqual((await get(customer._id)).body, customer);
  });

  it('trims and lower-cases an updated e-mail (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    const email = uniqueEmail('upd');
    const res = await put(customer._id, { email: `  ${email.toUpperCase()} ` });
    assert.equal(res.status, 200);
    assert.equal(res.body.email, email);
  });

  it('re-derives firstName and lastName when only name changes (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token, { name: 'Ana Souza' });
    const res = await put(customer._id, { name: '  Beatriz   Lima  Costa ' });
    assert.equal(res.status, 200);
    assert.deepEqual(
      [res.body.name, res.body.firstName, res.body.lastName],
      ['Beatriz   Lima  Costa', 'Beatriz', 'Lima Costa'],
    );
    const single = await put(customer._id, { name: 'Cher' });
    assert.deepEqual([single.body.name, single.body.firstName, single.body.lastName], ['Cher', 'Cher', null]);
  });

  it('rebuilds name from firstName and the stored lastName when only firstName changes (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token, { name: 'Ana Maria Souza' });
    const res = await put(customer._id, { firstName: 'Aninha' });
    assert.equal(res.status, 200);
    assert.deepEqual(
      [res.body.name, res.body.firstName, res.body.lastName],
      ['Aninha Maria Souza', 'Aninha', 'Maria Souza'],
    );
    assert.deepEqual((await get(customer._id)).body, res.body);
  });

  it('rebuilds name from the stored firstName and lastName when only lastName changes (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token, { name: 'Ana Maria Souza' });
    const res = await put(customer._id, { lastName: 'Pereira' });
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.name, res.body.firstName, res.body.lastName], ['Ana Pereira', 'Ana', 'Pereira']);
  });

  it('rebuilds name as firstName + " " + lastName when both change (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token, { name: 'Ana Souza' });
    const res = await put(customer._id, { firstName: ' Carla ', lastName: ' Dias Neto ' });
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.name, res.body.firstName, res.body.lastName], ['Carla Dias Neto', 'Carla', 'Dias Neto']);
  });

  it('keeps a name rebuilt from two 100-character parts within 200 characters (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    const res = await put(customer._id, { firstName: 'f'.repeat(100), lastName: 'l'.repeat(100) });
    assert.equal(res.status, 200);
    assert.equal(res.body.firstName, 'f'.repeat(100));
    assert.equal(res.body.lastName, 'l'.repeat(100));
    assert.equal(res.body.name, `${'f'.repeat(100)} ${'l'.repeat(99)}`);
  });

  it('stores name, firstName and lastName as given when all three are sent (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token, { name: 'Ana Souza' });
    const res = await put(customer._id, { name: 'Dra. Ana Souza', firstName: 'Ana', lastName: 'Souza' });
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.name, res.body.firstName, res.body.lastName], ['Dra. Ana Souza', 'Ana', 'Souza']);
  });

  it('moves updatedAt and keeps createdAt (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    await sleep(15);
    const res = await put(customer._id, { phone: '555' });
    assert.equal(res.status, 200);
    assert.equal(res.body.createdAt, customer.createdAt);
    assert.ok(Date.parse(res.body.updatedAt) > Date.parse(customer.updatedAt), `${res.body.updatedAt}`);
  });

  it('ignores read-only fields sent back with a change (SPEC §3)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    const res = await put(customer._id, {
      ...customer,
      _id: UNKNOWN_ID,
      id: UNKNOWN_ID,
      createdAt: '2000-01-01T00:00:00.000Z',
      updatedAt: '2000-01-01T00:00:00.000Z',
      phone: '777',
    });
    assert.equal(res.status, 200);
    assert.equal(res.body._id, customer._id);
    assert.equal(res.body.id, customer._id);
    assert.equal(res.body.createdAt, customer.createdAt);
    assert.notEqual(res.body.updatedAt, '2000-01-01T00:00:00.000Z');
    assert.equal(res.body.phone, '777');
  });

  it('refuses an e-mail another customer of the tenant holds: 409 with existingId, nothing changed (SPEC §4)', async () => {
    const holder = await createCustomer(ctx, tenant.token, { email: 'taken@x.com' });
    const customer = await createCustomer(ctx, tenant.token);
    const res = await put(customer._id, { email: 'Taken@X.com', phone: '888' });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, {
      success: false,
      error: 'Já existe um cliente com este e-mail.',
      code: 'conflict',
      existingId: holder._id,
    });
    assert.deepEqual((await get(customer._id)).body, customer);
    assert.deepEqual((await get(holder._id)).body, holder);
  });

  it('accepts a customer keeping its own e-mail, in any case (SPEC §4)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    const same = await put(customer._id, { email: customer.email, phone: '999' });
    assert.equal(same.status, 200);
    assert.equal(same.body.email, customer.email);
    const upper = await put(customer._id, { email: customer.email.toUpperCase() });
    assert.equal(upper.status, 200);
    assert.equal(upper.body.email, customer.email);
  });

  it('rejects hostile input on update with a 400 and changes nothing (SPEC §2)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    assertValidationFailed(await put(customer._id, { notes: 'a\u0000b' }));
    assertValidationFailed(await put(customer._id, { name: 'a\u0000b' }));
    assertInvalidField(await put(customer._id, { value: 1e308 }), 'value');
    assertValidationFailed(await put(customer._id, '{"constructor":{"prototype":{}}}'));
    assert.deepEqual((await get(customer._id)).body, customer);
  });

  it('answers 404 for an unknown id and for an id that is not a UUID (seed §4.2 rule 3, SPEC §2)', async () => {
    assertNotFound(await put(UNKNOWN_ID, { phone: '1' }));
    assertNotFound(await put('not-a-uuid', { phone: '1' }));
  });

  it('checks the path id before the body, and the body before existence (SPEC §2 order of checks)', async () => {
    assertNotFound(await put('not-a-uuid', { vip: true }));
    assertInvalidField(await put(UNKNOWN_ID, { vip: true }), 'vip');
    assertValidationFailed(await put(UNKNOWN_ID, {}));
  });
});
