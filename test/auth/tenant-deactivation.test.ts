import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { assertForbidden } from '../helpers/assert-error.js';
import { ADMIN_API, ADMIN_TOKEN, API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

describeEachBackend('tenant deactivation', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;
  let readOnlyToken: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON as answered.
  let lead: any;
  // biome-ignore lint/suspicious/noExplicitAny: JSON as answered.
  let customer: any;

  const setActive = (active: boolean) =>
    ctx.request('PUT', `${ADMIN_API}/tenants/${tenant.id}`, { token: ADMIN_TOKEN, body: { active } });

  before(async () => {
    tenant = await ctx.tenant('Deactivated');
    other = await ctx.tenant('Bystander');
    readOnlyToken = (await ctx.token(tenant.id, ['leads:read', 'customers:read'])).token;
    lead = (await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'L', phone: '1' } })).body;
    customer = (
      await ctx.request('POST', `${API}/customers`, { token: tenant.token, body: { name: 'C', email: 'c@x.example' } })
    ).body;
    // Used once, so that a cached lookup would be there to go stale.
    assert.equal((await ctx.request('GET', `${API}/leads`, { token: tenant.token })).status, 200);
  });

  it('refuses every token of a deactivated tenant at once (SPEC §5.5, seed §5.3)', async () => {
    const res = await setActive(false);
    assert.equal(res.status, 200);
    assert.equal(res.body.active, false);
    for (const token of [tenant.token, readOnlyToken]) {
      assertForbidden(await ctx.request('GET', `${API}/leads`, { token }));
      assertForbidden(await ctx.request('GET', `${API}/customers/${customer._id}`, { token }));
    }
    assertForbidden(
      await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'x', phone: '2' } }),
    );
    assertForbidden(await ctx.request('DELETE', `${API}/leads/${lead._id}`, { token: tenant.token }));
  });

  it('leaves other tenants working while one is inactive (SPEC §5.5)', async () => {
    assert.equal((await ctx.request('GET', `${API}/leads`, { token: other.token })).status, 200);
  });

  it('keeps the data of an inactive tenant (SPEC §5.5)', async () => {
    const leads = await ctx.db.selectFrom('leads').select('id').where('tenantId', '=', tenant.id).execute();
    const customers = await ctx.db.selectFrom('customers').select('id').where('tenantId', '=', tenant.id).execute();
    assert.deepEqual(leads, [{ id: lead._id }]);
    assert.deepEqual(customers, [{ id: customer._id }]);
  });

  it('serves the tenant again, with all its data, once reactivated (SPEC §5.5)', async () => {
    const res = await setActive(true);
    assert.equal(res.status, 200);
    assert.equal(res.body.active, true);
    const leads = await ctx.request('GET', `${API}/leads`, { token: tenant.token });
    assert.equal(leads.status, 200);
    assert.deepEqual(
      leads.body.map((l: { _id: string }) => l._id),
      [lead._id],
    );
    const fullLead = await ctx.request('GET', `${API}/leads/${lead._id}`, { token: readOnlyToken });
    assert.equal(fullLead.status, 200);
    assert.deepEqual(fullLead.body, lead);
    const fullCustomer = await ctx.request('GET', `${API}/customers/${customer._id}`, { token: readOnlyToken });
    assert.equal(fullCustomer.status, 200);
    assert.deepEqual(fullCustomer.body, customer);
  });
});
