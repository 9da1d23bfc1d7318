import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { assertNotFound, createLead, LEAD_KEYS, readLead, UNKNOWN_ID } from './lead-fixtures.js';

describeEachBackend('GET and DELETE /leads/:id', (ctx) => {
  let tenant: TestTenant;

  before(async () => {
    tenant = await ctx.tenant();
  });

  it('GET answers the full lead, as created (SPEC §3 extension)', async () => {
    const lead = await createLead(ctx, tenant.token, { phone: '1', notes: 'n', source: 's', score: 3 });
    const res = await readLead(ctx, tenant.token, lead._id);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), LEAD_KEYS);
    assert.deepEqual(res.body, lead);
  });

  it('GET answers 404 not_found for an unknown id (seed §4.1 rule 5)', async () => {
    assertNotFound(await readLead(ctx, tenant.token, UNKNOWN_ID));
    const en = await ctx.request('GET', `${API}/leads/${UNKNOWN_ID}`, {
      token: tenant.token,
      headers: { 'accept-language': 'en' },
    });
    assert.equal(en.status, 404);
    assert.deepEqual(en.body, { success: false, error: 'Lead not found.', code: 'not_found' });
  });

  it('answers 404 for an id that is not a UUID, on every :id route (SPEC §2)', async () => {
    for (const id of ['123', 'not-a-uuid', `${UNKNOWN_ID}x`, "1' or '1'='1"]) {
      const path = `${API}/leads/${encodeURIComponent(id)}`;
      assertNotFound(await ctx.request('GET', path, { token: tenant.token }));
      assertNotFound(await ctx.request('PUT', path, { token: tenant.token, body: { score: 1 } }));
      assertNotFound(await ctx.request('PUT', `${path}/status`, { token: tenant.token, body: { status: 'won' } }));
      assertNotFound(await ctx.request('DELETE', path, { token: tenant.token }));
    }
  });

  it('PUT answers 404 for an unknown id with a valid body (seed §4.1 rule 5)', async () => {
    assertNotFound(await ctx.request('PUT', `${API}/leads/${UNKNOWN_ID}`, { token: tenant.token, body: { score: 1 } }));
    assertNotFound(
      await ctx.request('PUT', `${API}/leads/${UNKNOWN_ID}/status`, { token: tenant.token, body: { status: 'won' } }),
    );
  });

  it('DELETE answers {success: true}, then the lead is gone (seed §4.1)', async () => {
    const lead = await createLead(ctx, tenant.token);
    const keep = await createLead(ctx, tenant.token, { name: 'Keep' });
    const res = await ctx.request('DELETE', `${API}/leads/${lead._id}`, { token: tenant.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true });
    assertNotFound(await readLead(ctx, tenant.token, lead._id));
    assertNotFound(await ctx.request('DELETE', `${API}/leads/${lead._id}`, { token: tenant.token }));
    assertNotFound(await ctx.request('PUT', `${API}/leads/${lead._id}`, { token: tenant.token, body: { score: 1 } }));
    const list = await ctx.request('GET', `${API}/leads`, { token: tenant.token });
    const ids = list.body.map((item: { _id: string }) => item._id);
    assert.ok(!ids.includes(lead._id));
    assert.ok(ids.includes(keep._id));
    assert.deepEqual((await readLead(ctx, tenant.token, keep._id)).body, keep);
  });
});
