import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { SCOPES, type Scope } from '../../src/auth/scopes.js';
import { assertForbidden } from '../helpers/assert-error.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

interface Probe {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  body?: unknown;
  success: number;
}

/** Scopes that also open a scope's route (SPEC §5.7: leads:write creates leads too). */
const ALSO_OPENED_BY: Partial<Record<Scope, Scope[]>> = { 'leads:create': ['leads:write'] };

/** One representative route per scope (SPEC §5.2). */
const ROUTE_OF: Record<Scope, Probe> = {
  'leads:read': { method: 'GET', url: `${API}/leads`, success: 200 },
  // Past the scope check, a lead that does not exist: creating one is also leads:create's.
  'leads:write': { method: 'DELETE', url: `${API}/leads/01890000-0000-7000-8000-000000000000`, success: 404 },
  'leads:create': {
    method: 'POST',
    url: `${API}/leads`,
    body: { name: 'Lead', phone: '+55 11 5555-0000' },
    success: 201,
  },
  'customers:read': { method: 'GET', url: `${API}/customers`, success: 200 },
  'customers:write': {
    method: 'POST',
    url: `${API}/customers`,
    body: { name: 'C', email: 'c@x.example' },
    success: 201,
  },
  'webhooks:read': { method: 'GET', url: `${API}/webhooks`, success: 200 },
  // Past the scope check, a webhook that does not exist: creating one also needs a read scope.
  'webhooks:write': { method: 'DELETE', url: `${API}/webhooks/01890000-0000-7000-8000-000000000000`, success: 404 },
  // Past the scope check, a field that does not exist (creating one would make the next probe a 409).
  'fields:write': { method: 'DELETE', url: `${API}/fields/lead/not_defined`, success: 404 },
  'privacy:read': { method: 'GET', url: `${API}/personal-data?email=nobody@example.com`, success: 200 },
  'privacy:write': {
    method: 'POST',
    url: `${API}/personal-data/erase`,
    body: { email: 'nobody@example.com' },
    success: 200,
  },
  // Past the scope check, a pipeline that does not exist.
  'pipelines:write': { method: 'DELETE', url: `${API}/pipelines/01890000-0000-7000-8000-000000000000`, success: 404 },
};

describeEachBackend('token scopes', (ctx) => {
  let tenant: TestTenant;
  const only = new Map<Scope, string>();
  const allBut = new Map<Scope, string>();
  let emailSeq = 0;

  before(async () => {
    tenant = await ctx.tenant();
    for (const scope of SCOPES) {
      only.set(scope, (await ctx.token(tenant.id, [scope])).token);
      allBut.set(
        scope,
        (
          await ctx.token(
            tenant.id,
            SCOPES.filter((s) => s !== scope && !ALSO_OPENED_BY[scope]?.includes(s)),
          )
        ).token,
      );
    }
  });

  const send = (probe: Probe, token: string) => {
    // Customer e-mails are unique per tenant, so each create gets a fresh one.
    const body =
      probe.url.endsWith('/customers') && probe.method === 'POST'
        ? { name: 'C', email: `c${++emailSeq}@x.example` }
        : probe.body;
    return ctx.request(probe.method, probe.url, { token, body });
  };

  for (const scope of SCOPES) {
    it(`refuses a token lacking ${scope} on ${ROUTE_OF[scope].method} ${ROUTE_OF[scope].url} (SPEC §5.2)`, async () => {
      const res = await send(ROUTE_OF[scope], allBut.get(scope) as string);
      assertForbidden(res);
    });

    it(`allows a token holding only ${scope} on its route (SPEC §5.2)`, async () => {
      const res = await send(ROUTE_OF[scope], only.get(scope) as string);
      assert.equal(res.status, ROUTE_OF[scope].success, JSON.stringify(res.body));
    });
  }

  it('names the scopes of which any one would do, each language whole (SPEC §2)', async () => {
    const token = only.get('fields:write') as string;
    const pt = await ctx.request('GET', `${API}/events`, { token });
    assertForbidden(pt);
    assert.equal(pt.body.error, 'O token não tem o escopo necessário: leads:read ou customers:read.');
    const en = await ctx.request('GET', `${API}/events`, { token, headers: { 'accept-language': 'en' } });
    assert.equal(en.body.error, 'The token lacks the required scope: leads:read or customers:read.');
  });

  it('a write scope does not imply the read scope (SPEC §5.2)', async () => {
    assertForbidden(await ctx.request('GET', `${API}/leads`, { token: only.get('leads:write') as string }));
    assertForbidden(await ctx.request('GET', `${API}/customers`, { token: only.get('customers:write') as string }));
  });

  it('a read scope does not allow writes (SPEC §5.2)', async () => {
    const leadRead = only.get('leads:read') as string;
    const customerRead = only.get('customers:read') as string;
    assertForbidden(await send(ROUTE_OF['leads:write'], leadRead));
    assertForbidden(await send(ROUTE_OF['customers:write'], customerRead));
  });

  it('lead scopes do not open customer routes, nor the other way round (SPEC §5.2)', async () => {
    assertForbidden(await ctx.request('GET', `${API}/customers`, { token: only.get('leads:read') as string }));
    assertForbidden(await ctx.request('GET', `${API}/leads`, { token: only.get('customers:read') as string }));
  });

  it('every write route of a resource needs its write scope: PUT, PUT status, DELETE (SPEC §5.2)', async () => {
    const lead = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'L', phone: '1' } });
    const customer = await ctx.request('POST', `${API}/customers`, {
      token: tenant.token,
      body: { name: 'K', email: 'k@x.example' },
    });
    assert.equal(lead.status, 201);
    assert.equal(customer.status, 201);
    const leadRead = only.get('leads:read') as string;
    const customerRead = only.get('customers:read') as string;
    assertForbidden(await ctx.request('PUT', `${API}/leads/${lead.body._id}`, { token: leadRead, body: { score: 5 } }));
    assertForbidden(
      await ctx.request('PUT', `${API}/leads/${lead.body._id}/status`, { token: leadRead, body: { status: 'won' } }),
    );
    assertForbidden(await ctx.request('DELETE', `${API}/leads/${lead.body._id}`, { token: leadRead }));
    assertForbidden(
      await ctx.request('PUT', `${API}/customers/${customer.body._id}`, { token: customerRead, body: { notes: 'n' } }),
    );
    assertForbidden(
      await ctx.request('PUT', `${API}/customers/${customer.body._id}/status`, {
        token: customerRead,
        body: { status: 'blocked' },
      }),
    );
    assertForbidden(await ctx.request('DELETE', `${API}/customers/${customer.body._id}`, { token: customerRead }));
    // And the read routes of a single record need the read scope.
    assertForbidden(await ctx.request('GET', `${API}/leads/${lead.body._id}`, { token: only.get('leads:write') }));
    assertForbidden(
      await ctx.request('GET', `${API}/customers/${customer.body._id}`, { token: only.get('customers:write') }),
    );
    // Nothing changed.
    const after = await ctx.request('GET', `${API}/leads/${lead.body._id}`, { token: tenant.token });
    assert.deepEqual(after.body, lead.body);
  });
});
