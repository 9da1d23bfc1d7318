import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import type { Customer } from '../../src/customers/customer.schemas.js';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import {
  assertForbidden,
  assertInvalidField,
  assertNotFound,
  assertValidationFailed,
  CUSTOMERS,
  createCustomer,
  sleep,
  UNKNOWN_ID,
} from './customer-fixtures.js';

describeEachBackend('PUT /customers/:id/status', (ctx) => {
  let tenant: TestTenant;
  let customer: Customer;
  before(async () => {
    tenant = await ctx.tenant();
    customer = await createCustomer(ctx, tenant.token, { name: 'Ana Souza', phone: '123', value: 5.5, notes: 'n' });
  });

  const putStatus = (id: string, body: unknown, token = tenant.token) =>
    ctx.request('PUT', `${CUSTOMERS}/${id}/status`, { token, body });

  it('sets each of active, inactive, blocked and changes nothing else (seed §3.2, §4.2)', async () => {
    let previous = customer;
    for (const status of ['blocked', 'inactive', 'active', 'blocked']) {
      await sleep(5);
      const res = await putStatus(customer._id, { status });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { ...customer, status, updatedAt: res.body.updatedAt });
      assert.ok(Date.parse(res.body.updatedAt) > Date.parse(previous.updatedAt));
      previous = res.body;
    }
    const read = await ctx.request('GET', `${CUSTOMERS}/${customer._id}`, { token: tenant.token });
    assert.deepEqual(read.body, previous);
  });

  it('allows any transition, including to the current status (seed §3.2: no restriction stated)', async () => {
    assert.equal((await putStatus(customer._id, { status: 'blocked' })).body.status, 'blocked');
    assert.equal((await putStatus(customer._id, { status: 'active' })).body.status, 'active');
    assert.equal((await putStatus(customer._id, { status: 'active' })).status, 200);
  });

  it('rejects a status outside active, inactive, blocked, listing them (SPEC §4)', async () => {
    for (const status of ['deleted', 'Active', ' active', '', null, 1, true]) {
      const message = assertInvalidField(await putStatus(customer._id, { status }), 'status');
      if (typeof status === 'string')
        assert.equal(message, "Campo 'status': deve ser um de: active, inactive, blocked.");
    }
    const read = await ctx.request('GET', `${CUSTOMERS}/${customer._id}`, { token: tenant.token });
    assert.equal(read.body.status, 'active');
  });

  it('takes exactly {status}: missing status or any other field is a 400 (SPEC §4)', async () => {
    assert.equal(assertInvalidField(await putStatus(customer._id, {}), 'status'), "Campo 'status': é obrigatório.");
    assertInvalidField(await putStatus(customer._id, { status: 'inactive', name: 'Outro' }), 'name');
    assertInvalidField(await putStatus(customer._id, { status: 'inactive', _id: customer._id }), '_id');
    assertValidationFailed(await putStatus(customer._id, ['inactive']));
    assertValidationFailed(await putStatus(customer._id, '"inactive"'));
    const read = await ctx.request('GET', `${CUSTOMERS}/${customer._id}`, { token: tenant.token });
    assert.equal(read.body.status, 'active');
    assert.equal(read.body.name, 'Ana Souza');
  });

  it('answers 404 for an unknown id and an id that is not a UUID (seed §4.2 rule 3)', async () => {
    assertNotFound(await putStatus(UNKNOWN_ID, { status: 'inactive' }));
    assertNotFound(await putStatus('123', { status: 'inactive' }));
  });

  it('needs customers:write (SPEC §5.2)', async () => {
    const reader = await ctx.token(tenant.id, ['customers:read']);
    assertForbidden(await putStatus(customer._id, { status: 'blocked' }, reader.token));
    const read = await ctx.request('GET', `${CUSTOMERS}/${customer._id}`, { token: tenant.token });
    assert.equal(read.body.status, 'active');
  });
});
