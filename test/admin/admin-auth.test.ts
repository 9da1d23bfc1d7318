import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { assertForbidden } from '../helpers/assert-error.js';
import { ADMIN_API, ADMIN_TOKEN, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const EVERY_ADMIN_ROUTE = (tenantId: string, tokenId: string) =>
  [
    ['POST', `${ADMIN_API}/tenants`, { name: 'Nope' }],
    ['GET', `${ADMIN_API}/tenants`, undefined],
    ['PUT', `${ADMIN_API}/tenants/${tenantId}`, { active: false }],
    ['POST', `${ADMIN_API}/tenants/${tenantId}/tokens`, { name: 'n', scopes: ['leads:read'] }],
    ['GET', `${ADMIN_API}/tenants/${tenantId}/tokens`, undefined],
    ['DELETE', `${ADMIN_API}/tokens/${tokenId}`, undefined],
  ] as const;

describeEachBackend('admin API authentication', (ctx) => {
  let tenant: TestTenant;
  before(async () => {
    tenant = await ctx.tenant();
  });

  it('accepts the configured admin token (SPEC §9)', async () => {
    const res = await ctx.request('GET', `${ADMIN_API}/tenants`, { token: ADMIN_TOKEN });
    assert.equal(res.status, 200);
  });

  it('refuses every admin route without a token, with a wrong one, or with a tenant token (SPEC §9)', async () => {
    const refused: Array<{ token?: string; headers?: Record<string, string> }> = [
      {},
      { token: `${ADMIN_TOKEN}x` },
      { token: ADMIN_TOKEN.slice(0, -1) },
      { token: tenant.token },
      { headers: { authorization: `Basic ${ADMIN_TOKEN}` } },
      { headers: { authorization: ADMIN_TOKEN } },
    ];
    for (const [method, url, body] of EVERY_ADMIN_ROUTE(tenant.id, tenant.tokenId)) {
      for (const credentials of refused) {
        const res = await ctx.request(method, url, { ...credentials, body });
        assertForbidden(res);
      }
    }
    // Nothing was done by the refused requests.
    const tenants = await ctx.db.selectFrom('tenants').select(['name', 'active']).execute();
    assert.deepEqual(tenants, [{ name: 'Tenant', active: true }]);
    const token = await ctx.db
      .selectFrom('apiTokens')
      .select(['revokedAt'])
      .where('tenantId', '=', tenant.id)
      .execute();
    assert.deepEqual(token, [{ revokedAt: null }]);
  });

  it('checks the admin token before the path id: a non-UUID id without a token is 403 (SPEC §2 order)', async () => {
    assertForbidden(await ctx.request('PUT', `${ADMIN_API}/tenants/not-a-uuid`, { body: {} }));
  });
});

describeEachBackend(
  'admin API without FUNIL_ADMIN_TOKEN',
  (ctx) => {
    let tenant: TestTenant;
    before(async () => {
      tenant = await ctx.tenant();
    });

    it('is disabled: every admin route answers 403 whatever the token (SPEC §9)', async () => {
      for (const [method, url, body] of EVERY_ADMIN_ROUTE(tenant.id, tenant.tokenId)) {
        for (const token of [undefined, ADMIN_TOKEN, tenant.token, '']) {
          assertForbidden(await ctx.request(method, url, { token, body }));
        }
      }
      const tenants = await ctx.db.selectFrom('tenants').select(['name', 'active']).execute();
      assert.deepEqual(tenants, [{ name: 'Tenant', active: true }]);
    });
  },
  { FUNIL_ADMIN_TOKEN: '' },
);
