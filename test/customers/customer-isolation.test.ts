import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import type { Customer } from '../../src/customers/customer.schemas.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { assertForbidden, assertNotFound, CUSTOMERS, createCustomer, UNKNOWN_ID } from './customer-fixtures.js';

describeEachBackend('customers: scopes and tenant isolation', (ctx) => {
  let tenantA: TestTenant;
  let tenantB: TestTenant;
  let customerA: Customer;
  before(async () => {
    tenantA = await ctx.tenant('A');
    tenantB = await ctx.tenant('B');
    customerA = await createCustomer(ctx, tenantA.token, {
      name: 'Ana Souza',
      email: 'ana@a.example.com',
      phone: '123',
      status: 'inactive',
      type: 'company',
      value: 42.5,
      autoPayment: true,
      notes: 'Só do tenant A.',
    });
    await createCustomer(ctx, tenantB.token, { name: 'Bruno B', email: 'bruno@b.example.com' });
  });

  const readA = () => ctx.request('GET', `${CUSTOMERS}/${customerA._id}`, { token: tenantA.token });

  it('a customers:read token can read but not write (SPEC §5.2)', async () => {
    const reader = await ctx.token(tenantA.id, ['customers:read']);
    assert.equal((await ctx.request('GET', CUSTOMERS, { token: reader.token })).status, 200);
    assert.equal((await ctx.request('GET', `${CUSTOMERS}/${customerA._id}`, { token: reader.token })).status, 200);
    const body = { name: 'X', email: 'x@a.example.com' };
    assertForbidden(await ctx.request('POST', CUSTOMERS, { token: reader.token, body }));
    assertForbidden(
      await ctx.request('PUT', `${CUSTOMERS}/${customerA._id}`, { token: reader.token, body: { phone: '1' } }),
    );
    assertForbidden(
      await ctx.request('PUT', `${CUSTOMERS}/${customerA._id}/status`, {
        token: reader.token,
        body: { status: 'active' },
      }),
    );
    assertForbidden(await ctx.request('DELETE', `${CUSTOMERS}/${customerA._id}`, { token: reader.token }));
    assert.deepEqual((await readA()).body, customerA);
    const rows = await ctx.db.selectFrom('customers').select('id').where('email', '=', 'x@a.example.com').execute();
    assert.deepEqual(rows, []);
  });

  it('a customers:write token can write but not read (SPEC §5.2: write does not imply read)', async () => {
    const writer = await ctx.token(tenantA.id, ['customers:write']);
    assertForbidden(await ctx.request('GET', CUSTOMERS, { token: writer.token }));
    assertForbidden(await ctx.request('GET', `${CUSTOMERS}/${customerA._id}`, { token: writer.token }));
    const created = await ctx.request('POST', CUSTOMERS, {
      token: writer.token,
      body: { name: 'Escritor', email: 'writer@a.example.com' },
    });
    assert.equal(created.status, 201);
    const deleted = await ctx.request('DELETE', `${CUSTOMERS}/${created.body._id}`, { token: writer.token });
    assert.equal(deleted.status, 200);
  });

  it('a leads-only token gets 403 on every customer route (SPEC §5.2)', async () => {
    const leads = await ctx.token(tenantA.id, ['leads:read', 'leads:write']);
    assertForbidden(await ctx.request('GET', CUSTOMERS, { token: leads.token }));
    assertForbidden(await ctx.request('GET', `${CUSTOMERS}/${customerA._id}`, { token: leads.token }));
    assertForbidden(
      await ctx.request('POST', CUSTOMERS, { token: leads.token, body: { name: 'X', email: 'y@a.example.com' } }),
    );
    assertForbidden(
      await ctx.request('PUT', `${CUSTOMERS}/${customerA._id}`, { token: leads.token, body: { phone: '1' } }),
    );
    assertForbidden(
      await ctx.request('PUT', `${CUSTOMERS}/${customerA._id}/status`, {
        token: leads.token,
        body: { status: 'active' },
      }),
    );
    assertForbidden(await ctx.request('DELETE', `${CUSTOMERS}/${customerA._id}`, { token: leads.token }));
    assert.equal((await ctx.request('GET', `${API}/leads`, { token: leads.token })).status, 200);
    assert.deepEqual((await readA()).body, customerA);
  });

  it('checks the token before the path id and the body (SPEC §2 order of checks)', async () => {
    const leads = await ctx.token(tenantA.id, ['leads:read']);
    assertForbidden(await ctx.request('GET', `${CUSTOMERS}/not-a-uuid`, { token: leads.token }));
    assertForbidden(await ctx.request('PUT', `${CUSTOMERS}/not-a-uuid`, { token: leads.token, body: { vip: 1 } }));
    assertForbidden(await ctx.request('GET', `${CUSTOMERS}/${customerA._id}`));
    assertForbidden(await ctx.request('GET', CUSTOMERS, { token: 'fnl_not-a-real-token' }));
  });

  it("tenant B gets 404 on tenant A's customer on every :id route, and A's customer is unchanged (SPEC §5.3)", async () => {
    const url = `${CUSTOMERS}/${customerA._id}`;
    const token = tenantB.token;
    assertNotFound(await ctx.request('GET', url, { token }));
    assertNotFound(await ctx.request('PUT', url, { token, body: { name: 'Invasor', phone: '666', notes: 'x' } }));
    assertNotFound(await ctx.request('PUT', `${url}/status`, { token, body: { status: 'blocked' } }));
    assertNotFound(await ctx.request('DELETE', url, { token }));
    const after = await readA();
    assert.equal(after.status, 200);
    assert.deepEqual(after.body, customerA);
  });

  it("answers B's request for A's customer exactly as for an id that does not exist (SPEC §5.3)", async () => {
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PUT', '', { phone: '1' }],
      ['PUT', '/status', { status: 'active' }],
      ['DELETE', '', undefined],
    ] as const) {
      const foreign = await ctx.request(method, `${CUSTOMERS}/${customerA._id}${suffix}`, {
        token: tenantB.token,
        body,
      });
      const missing = await ctx.request(method, `${CUSTOMERS}/${UNKNOWN_ID}${suffix}`, { token: tenantB.token, body });
      assert.equal(foreign.status, missing.status);
      assert.deepEqual(foreign.body, missing.body);
    }
    assert.deepEqual((await readA()).body, customerA);
  });

  it("B's list does not show A's customers, and A's does not show B's (SPEC §5.3)", async () => {
    const listB = await ctx.request('GET', CUSTOMERS, { token: tenantB.token, query: { limit: '1000' } });
    assert.equal(listB.status, 200);
    assert.deepEqual(
      listB.body.map((c: { email: string }) => c.email),
      ['bruno@b.example.com'],
    );
    const listA = await ctx.request('GET', CUSTOMERS, { token: tenantA.token, query: { limit: '1000' } });
    assert.ok(listA.body.some((c: { _id: string }) => c._id === customerA._id));
    assert.ok(!listA.body.some((c: { email: string }) => c.email === 'bruno@b.example.com'));
  });

  it("B's e-mail conflict never reveals A's customer: B may use A's e-mail (SPEC §4, §5.3)", async () => {
    const created = await ctx.request('POST', CUSTOMERS, {
      token: tenantB.token,
      body: { name: 'Ana B', email: customerA.email },
    });
    assert.equal(created.status, 201);
    assert.notEqual(created.body._id, customerA._id);
    const again = await ctx.request('POST', CUSTOMERS, {
      token: tenantB.token,
      body: { name: 'Ana B2', email: customerA.email },
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.existingId, created.body._id);
    assert.deepEqual((await readA()).body, customerA);
  });
});
