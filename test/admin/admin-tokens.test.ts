import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertError, assertForbidden } from '../helpers/assert-error.js';
import { ADMIN_API, ADMIN_TOKEN, API, describeEachBackend } from '../helpers/test-app.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const TOKEN_SHAPE = /^fnl_[A-Za-z0-9_-]{43,}$/;
const UNKNOWN_ID = '01890a5d-ac96-774b-bcce-b302099a8057';
const SUMMARY_KEYS = ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt', 'scopes', 'tenant'];

describeEachBackend('admin API: tokens', (ctx) => {
  let tenantId: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON as answered.
  let created: any;
  const admin = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) =>
    ctx.request(method, `${ADMIN_API}${url}`, { token: ADMIN_TOKEN, body });
  const createToken = (body: unknown, tenant = tenantId) => admin('POST', `/tenants/${tenant}/tokens`, body);

  before(async () => {
    tenantId = (await admin('POST', '/tenants', { name: 'Acme' })).body.id;
  });

  it('creates a token: 201 with exactly id, token, name, scopes, tenant, expiresAt, createdAt (SPEC §9, §5.1)', async () => {
    const res = await createToken({ name: ' website form ', scopes: ['leads:write', 'leads:read'] });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'createdAt',
      'expiresAt',
      'id',
      'name',
      'scopes',
      'tenant',
      'token',
    ]);
    assert.match(res.body.token, TOKEN_SHAPE);
    assert.equal(res.body.name, 'website form');
    assert.deepEqual(res.body.scopes, ['leads:write', 'leads:read']);
    assert.equal(res.body.tenant, tenantId);
    assert.equal(res.body.expiresAt, null);
    assert.match(res.body.createdAt, ISO_MS);
    created = res.body;
  });

  it('issues a token that works at once, with exactly its scopes (SPEC §5)', async () => {
    const write = await ctx.request('POST', `${API}/leads`, { token: created.token, body: { name: 'L', phone: '1' } });
    assert.equal(write.status, 201);
    assert.equal(write.body.tenant, tenantId);
    assert.equal(write.body.createdBy, created.id);
    assert.equal((await ctx.request('GET', `${API}/leads`, { token: created.token })).status, 200);
    assertForbidden(await ctx.request('GET', `${API}/customers`, { token: created.token }));
  });

  it('issues a different token every time (SPEC §5.1)', async () => {
    const again = await createToken({ name: 'website form', scopes: ['leads:write', 'leads:read'] });
    assert.equal(again.status, 201);
    assert.notEqual(again.body.token, created.token);
    assert.notEqual(again.body.id, created.id);
  });

  it('stores expiresAt and answers it in UTC with milliseconds (SPEC §9, §1.5)', async () => {
    const res = await createToken({
      name: 'expiring',
      scopes: ['customers:read'],
      expiresAt: '2099-01-01T00:00:00+02:00',
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.expiresAt, '2098-12-31T22:00:00.000Z');
    const explicitNull = await createToken({ name: 'forever', scopes: ['customers:read'], expiresAt: null });
    assert.equal(explicitNull.status, 201);
    assert.equal(explicitNull.body.expiresAt, null);
  });

  it('rejects bad scopes, empty scopes, duplicate scopes and a past expiresAt with 400 (SPEC §9, §5.2)', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', scopes: ['leads:delete'] }, 'scopes.0'],
      [{ name: 'x', scopes: ['admin'] }, 'scopes.0'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['leads:read', 'leads:read'] }, 'scopes'],
      [{ name: 'x', scopes: 'leads:read' }, 'scopes'],
      [{ name: 'x' }, 'scopes'],
      [{ scopes: ['leads:read'] }, 'name'],
      [{ name: '', scopes: ['leads:read'] }, 'name'],
      [{ name: 'x', scopes: ['leads:read'], expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt'],
      [{ name: 'x', scopes: ['leads:read'], expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ name: 'x', scopes: ['leads:read'], tenant: tenantId, token: 'fnl_mine' }, 'tenant'],
    ];
    const before = await ctx.db.selectFrom('apiTokens').select('id').execute();
    for (const [body, field] of cases) {
      const res = await createToken(body);
      assertError(res, 400, 'validation_failed', { details: true });
      assert.equal(res.body.details[0].field, field, JSON.stringify(body));
    }
    const after = await ctx.db.selectFrom('apiTokens').select('id').execute();
    assert.equal(after.length, before.length, 'a refused request created a token');
  });

  it('answers 404 when creating a token for an unknown or non-UUID tenant (SPEC §9)', async () => {
    assertError(await createToken({ name: 'x', scopes: ['leads:read'] }, UNKNOWN_ID), 404, 'not_found');
    assertError(await createToken({ name: 'x', scopes: ['leads:read'] }, 'not-a-uuid'), 404, 'not_found');
  });

  it('lists tokens without the token, with its 8-char prefix, lastUsedAt and revokedAt (SPEC §9)', async () => {
    const res = await admin('GET', `/tenants/${tenantId}/tokens`);
    assert.equal(res.status, 200);
    assert.ok(res.body.length >= 4);
    for (const summary of res.body) {
      assert.deepEqual(Object.keys(summary).sort(), SUMMARY_KEYS);
      assert.equal(summary.tenant, tenantId);
      assert.equal(summary.prefix.length, 8);
      assert.ok(summary.prefix.startsWith('fnl_'));
      assert.equal(summary.revokedAt, null);
    }
    const mine = res.body.find((t: { id: string }) => t.id === created.id);
    assert.deepEqual(mine, {
      id: created.id,
      name: created.name,
      scopes: created.scopes,
      tenant: tenantId,
      expiresAt: null,
      createdAt: created.createdAt,
      prefix: created.token.slice(0, 8),
      lastUsedAt: mine.lastUsedAt,
      revokedAt: null,
    });
    assert.ok(!JSON.stringify(res.body).includes(created.token));
  });

  it('sets lastUsedAt once a token has been used (SPEC §9)', async () => {
    const fresh = (await createToken({ name: 'unused', scopes: ['leads:read'] })).body;
    const listed = async () =>
      (await admin('GET', `/tenants/${tenantId}/tokens`)).body.find((t: { id: string }) => t.id === fresh.id);
    assert.equal((await listed()).lastUsedAt, null);
    const usedFrom = Date.now();
    assert.equal((await ctx.request('GET', `${API}/leads`, { token: fresh.token })).status, 200);
    // The write happens off the request's path: give it a moment.
    let lastUsedAt: string | null = null;
    for (let i = 0; i < 50 && lastUsedAt === null; i++) {
      lastUsedAt = (await listed()).lastUsedAt;
      if (lastUsedAt === null) await sleep(20);
    }
    assert.ok(lastUsedAt, 'lastUsedAt was never set');
    assert.match(lastUsedAt, ISO_MS);
    assert.ok(Date.parse(lastUsedAt) >= usedFrom - 1000 && Date.parse(lastUsedAt) <= Date.now() + 1000);
  });

  it('answers 404 when listing the tokens of an unknown or non-UUID tenant (SPEC §9)', async () => {
    assertError(await admin('GET', `/tenants/${UNKNOWN_ID}/tokens`), 404, 'not_found');
    assertError(await admin('GET', '/tenants/not-a-uuid/tokens'), 404, 'not_found');
  });

  it('revokes a token: 200 {success: true}, revokedAt set, refused at once (SPEC §9, §5.4)', async () => {
    const res = await admin('DELETE', `/tokens/${created.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true });
    const summary = (await admin('GET', `/tenants/${tenantId}/tokens`)).body.find(
      (t: { id: string }) => t.id === created.id,
    );
    assert.match(summary.revokedAt, ISO_MS);
    assertForbidden(await ctx.request('GET', `${API}/leads`, { token: created.token }));
    // Revoking again succeeds and keeps the first revocation time.
    const again = await admin('DELETE', `/tokens/${created.id}`);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, { success: true });
    const still = (await admin('GET', `/tenants/${tenantId}/tokens`)).body.find(
      (t: { id: string }) => t.id === created.id,
    );
    assert.equal(still.revokedAt, summary.revokedAt);
  });

  it('answers 404 when revoking an unknown or non-UUID token id (SPEC §9)', async () => {
    assertError(await admin('DELETE', `/tokens/${UNKNOWN_ID}`), 404, 'not_found');
    assertError(await admin('DELETE', '/tokens/not-a-uuid'), 404, 'not_found');
    // A tenant id is not a token id.
    assertError(await admin('DELETE', `/tokens/${tenantId}`), 404, 'not_found');
  });
});
