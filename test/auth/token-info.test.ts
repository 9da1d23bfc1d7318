import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertForbidden } from '../helpers/assert-error.js';
import { API, describeEachBackend } from '../helpers/test-app.js';

describeEachBackend('GET /token: what the calling token is', (ctx) => {
  it('answers any token of the tenant with its id, tenant and scopes, in the order of SPEC §19', async () => {
    const tenant = await ctx.tenant();
    const narrow = await ctx.token(tenant.id, ['webhooks:read', 'leads:read']);
    const answer = await ctx.request('GET', `${API}/token`, { token: narrow.token });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { tokenId: narrow.id, tenant: tenant.id, scopes: ['leads:read', 'webhooks:read'] });
  });

  it('is a 403 without a valid token', async () => {
    assertForbidden(await ctx.request('GET', `${API}/token`));
    assertForbidden(
      await ctx.request('GET', `${API}/token`, { token: 'fnl_not-a-real-token-0000000000000000000000000' }),
    );
  });
});
