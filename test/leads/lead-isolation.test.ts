import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { assertFieldError, assertNotFound, createLead, readLead, UNKNOWN_ID } from './lead-fixtures.js';

describeEachBackend('lead tenant isolation', (ctx) => {
  let a: TestTenant;
  let b: TestTenant;
  let leadOfA: Record<string, unknown> & { _id: string };

  before(async () => {
    a = await ctx.tenant('A');
    b = await ctx.tenant('B');
    leadOfA = await createLead(ctx, a.token, {
      name: 'Lead of A',
      phone: '11 1111-1111',
      source: 'site',
      score: 42,
      notes: 'secret',
      lastContact: '2026-11-01T12:00:00Z',
    });
    await createLead(ctx, b.token, { name: 'Lead of B' });
  });

  it("answers 404 to tenant B on every :id route of A's lead (SPEC §5.3)", async () => {
    const path = `${API}/leads/${leadOfA._id}`;
    assertNotFound(await ctx.request('GET', path, { token: b.token }));
    assertNotFound(await ctx.request('PUT', path, { token: b.token, body: { name: 'Hijacked', score: 0 } }));
    assertNotFound(await ctx.request('PUT', `${path}/status`, { token: b.token, body: { status: 'lost' } }));
    assertNotFound(await ctx.request('DELETE', path, { token: b.token }));
  });

  it("leaves A's lead exactly as it was after B's attempts (SPEC §5.3)", async () => {
    const res = await readLead(ctx, a.token, leadOfA._id);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, leadOfA);
  });

  it("keeps A's leads out of B's list, and B's out of A's (SPEC §5.3)", async () => {
    const listB = await ctx.request('GET', `${API}/leads`, { token: b.token });
    assert.equal(listB.status, 200);
    assert.deepEqual(
      listB.body.map((item: { name: string }) => item.name),
      ['Lead of B'],
    );
    const listA = await ctx.request('GET', `${API}/leads`, { token: a.token });
    assert.deepEqual(
      listA.body.map((item: { _id: string }) => item._id),
      [leadOfA._id],
    );
  });

  it('stamps a lead with the tenant of the token, never of the body (SPEC §5.3)', async () => {
    const res = await ctx.request('POST', `${API}/leads`, {
      token: b.token,
      body: { name: 'Planted', email: 'p@example.com', tenant: a.id },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.tenant, b.id);
    assertNotFound(await readLead(ctx, a.token, res.body._id));
  });
});

describeEachBackend('lead order of checks', (ctx) => {
  let tenant: TestTenant;
  let leadId: string;
  const badBody = { score: 'high', nonsense: true };

  before(async () => {
    tenant = await ctx.tenant();
    leadId = (await createLead(ctx, tenant.token))._id;
  });

  it('answers 403, not 400, to a bad body without a token (SPEC §2)', async () => {
    const requests = [
      ctx.request('POST', `${API}/leads`, { body: badBody }),
      ctx.request('PUT', `${API}/leads/${leadId}`, { body: badBody }),
      ctx.request('PUT', `${API}/leads/${leadId}/status`, { body: badBody }),
      ctx.request('PUT', `${API}/leads/not-a-uuid`, { body: badBody }),
      ctx.request('GET', `${API}/leads`, { query: { limit: 'zero' } }),
    ];
    for (const res of await Promise.all(requests)) {
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(res.body.code, 'forbidden');
    }
  });

  it('answers 403 to a token without the write scope, before the body (SPEC §2, §5.2)', async () => {
    const reader = await ctx.token(tenant.id, ['leads:read']);
    const res = await ctx.request('PUT', `${API}/leads/${leadId}`, { token: reader.token, body: badBody });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'forbidden');
  });

  it('answers 404 to a non-UUID id before looking at a bad body (SPEC §2)', async () => {
    assertNotFound(await ctx.request('PUT', `${API}/leads/not-a-uuid`, { token: tenant.token, body: badBody }));
    assertNotFound(await ctx.request('PUT', `${API}/leads/not-a-uuid/status`, { token: tenant.token, body: {} }));
  });

  it('answers 400 to a bad body on a well-formed but unknown id (SPEC §2)', async () => {
    const bad = await ctx.request('PUT', `${API}/leads/${UNKNOWN_ID}`, {
      token: tenant.token,
      body: { score: 'high' },
    });
    assertFieldError(bad, 'score');
    assertFieldError(
      await ctx.request('PUT', `${API}/leads/${UNKNOWN_ID}/status`, { token: tenant.token, body: { status: 'x' } }),
      'status',
    );
    const empty = await ctx.request('PUT', `${API}/leads/${UNKNOWN_ID}`, { token: tenant.token, body: {} });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.code, 'validation_failed');
  });
});
