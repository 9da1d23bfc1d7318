import assert from 'node:assert/strict';
import { it } from 'node:test';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const LEAD_MESSAGE = 'O nome é obrigatório e é necessário informar um e-mail ou telefone.';

describeEachBackend('POST /leads', (ctx) => {
  let tenant: TestTenant;
  it('setup', async () => {
    tenant = await ctx.tenant();
  });

  it('creates a lead with defaults and every key of the full object (SPEC §3)', async () => {
    const res = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: { name: '  Maria Silva ', email: ' Maria@Example.COM ' },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), [
      '_id',
      'createdAt',
      'createdBy',
      'email',
      'lastContact',
      'name',
      'notes',
      'phone',
      'score',
      'source',
      'status',
      'tenant',
      'updatedAt',
    ]);
    assert.equal(res.body.name, 'Maria Silva');
    assert.equal(res.body.email, 'maria@example.com');
    assert.equal(res.body.status, 'new');
    assert.equal(res.body.score, 0);
    assert.equal(res.body.tenant, tenant.id);
    assert.equal(res.body.createdBy, tenant.tokenId);
    assert.match(res.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('rejects a lead without e-mail and phone with the seed message (SPEC §2)', async () => {
    const res = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'x', phone: '' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.success, false);
    assert.equal(res.body.code, 'validation_failed');
    assert.equal(res.body.error, LEAD_MESSAGE);
  });
});
