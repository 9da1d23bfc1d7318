import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, it } from 'node:test';
import { assertForbidden } from '../helpers/assert-error.js';
import { ADMIN_API, ADMIN_TOKEN, API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** Well-formed (fnl_ + 43 URL-safe characters) but issued by nobody. */
const UNKNOWN_TOKEN = `fnl_${'A'.repeat(43)}`;

describeEachBackend('bearer token authentication', (ctx) => {
  let tenant: TestTenant;
  before(async () => {
    tenant = await ctx.tenant();
  });

  it('accepts a valid bearer token (SPEC §5.1)', async () => {
    const res = await ctx.request('GET', `${API}/leads`, { token: tenant.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, []);
  });

  it('refuses a request without Authorization with 403 forbidden (SPEC §5, seed §5.4)', async () => {
    assertForbidden(await ctx.request('GET', `${API}/leads`));
    assertForbidden(await ctx.request('POST', `${API}/customers`, { body: { name: 'A', email: 'a@example.com' } }));
  });

  it('refuses a scheme other than Bearer, even carrying a valid token (SPEC §5.1)', async () => {
    for (const authorization of ['Basic xyz', `Basic ${tenant.token}`, `Token ${tenant.token}`, tenant.token]) {
      const res = await ctx.request('GET', `${API}/leads`, { headers: { authorization } });
      assertForbidden(res);
    }
  });

  it('refuses malformed tokens (SPEC §5.1)', async () => {
    const malformed = [
      'Bearer fnl_short',
      'Bearer random-text',
      'Bearer ',
      'Bearer',
      `Bearer ${tenant.token}x y`,
      `Bearer ${tenant.token.slice(4)}`,
      `Bearer ${'fnl_'}${'!'.repeat(43)}`,
    ];
    for (const authorization of malformed) {
      const res = await ctx.request('GET', `${API}/leads`, { headers: { authorization } });
      assertForbidden(res);
    }
  });

  it('refuses a well-formed token that was never issued (SPEC §5)', async () => {
    assertForbidden(await ctx.request('GET', `${API}/leads`, { token: UNKNOWN_TOKEN }));
  });

  it('refuses the admin token on the external API: it is not an API token (SPEC §5, §9)', async () => {
    assertForbidden(await ctx.request('GET', `${API}/leads`, { token: ADMIN_TOKEN }));
  });

  it('refuses an expired token and accepts one expiring in the future (SPEC §5.4)', async () => {
    const expired = await ctx.token(tenant.id, ['leads:read'], new Date(Date.now() - 1000));
    assertForbidden(await ctx.request('GET', `${API}/leads`, { token: expired.token }));
    const valid = await ctx.token(tenant.id, ['leads:read'], new Date(Date.now() + 3_600_000));
    assert.equal((await ctx.request('GET', `${API}/leads`, { token: valid.token })).status, 200);
  });

  it('refuses a token whose expires_at was moved into the past (SPEC §5.4)', async () => {
    const issued = await ctx.token(tenant.id, ['leads:read']);
    await ctx.db
      .updateTable('apiTokens')
      .set({ expiresAt: new Date(Date.now() - 60_000) })
      .where('id', '=', issued.id)
      .execute();
    assertForbidden(await ctx.request('GET', `${API}/leads`, { token: issued.token }));
  });

  it('refuses a token at once after the admin revokes it on the same instance (SPEC §5.4)', async () => {
    const issued = await ctx.token(tenant.id, ['leads:read', 'leads:write']);
    // Used first, so that a cached lookup would be there to go stale.
    assert.equal((await ctx.request('GET', `${API}/leads`, { token: issued.token })).status, 200);
    const revoke = await ctx.request('DELETE', `${ADMIN_API}/tokens/${issued.id}`, { token: ADMIN_TOKEN });
    assert.equal(revoke.status, 200);
    assert.deepEqual(revoke.body, { success: true });
    assertForbidden(await ctx.request('GET', `${API}/leads`, { token: issued.token }));
    assertForbidden(
      await ctx.request('POST', `${API}/leads`, { token: issued.token, body: { name: 'x', phone: '1' } }),
    );
    // Other tokens of the tenant are untouched.
    assert.equal((await ctx.request('GET', `${API}/leads`, { token: tenant.token })).status, 200);
  });

  it('checks the token before the path id: no token on a non-UUID id is 403, not 404 (SPEC §2 order)', async () => {
    assertForbidden(await ctx.request('GET', `${API}/leads/not-a-uuid`));
    assertForbidden(await ctx.request('PUT', `${API}/customers/not-a-uuid`, { body: { bogus: 1 } }));
    const res = await ctx.request('GET', `${API}/leads/not-a-uuid`, { token: tenant.token });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'not_found');
  });

  it('stores only the SHA-256 hash of a token, never the token (SPEC §5.1)', async () => {
    const issued = await ctx.token(tenant.id, ['customers:read']);
    const row = await ctx.db
      .selectFrom('apiTokens')
      .select(['tokenHash', 'prefix'])
      .where('id', '=', issued.id)
      .executeTakeFirstOrThrow();
    assert.match(row.tokenHash, /^[0-9a-f]{64}$/);
    assert.notEqual(row.tokenHash, issued.token);
    assert.equal(row.tokenHash, sha256(issued.token));
    assert.equal(row.prefix, issued.token.slice(0, 8));
    const everyRow = await ctx.db.selectFrom('apiTokens').selectAll().execute();
    assert.ok(!JSON.stringify(everyRow).includes(issued.token), 'the plain token is stored somewhere');
  });

  it('never shows a token in an answer other than the admin create answer (SPEC §5.1, §9)', async () => {
    const created = await ctx.request('POST', `${ADMIN_API}/tenants/${tenant.id}/tokens`, {
      token: ADMIN_TOKEN,
      body: { name: 'shown once', scopes: ['leads:read', 'leads:write'] },
    });
    assert.equal(created.status, 201);
    const token: string = created.body.token;
    const answers = [
      await ctx.request('POST', `${API}/leads`, { token, body: { name: 'Lead', phone: '123' } }),
      await ctx.request('GET', `${API}/leads`, { token }),
      await ctx.request('GET', `${API}/customers`, { token }),
      await ctx.request('GET', `${API}/nope`, { token }),
      await ctx.request('GET', `${API}/leads`, { headers: { authorization: `Basic ${token}` } }),
      await ctx.request('GET', `${ADMIN_API}/tenants/${tenant.id}/tokens`, { token: ADMIN_TOKEN }),
      await ctx.request('GET', `${ADMIN_API}/tenants`, { token }),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [201, 200, 403, 404, 403, 200, 403],
    );
    for (const answer of answers) {
      assert.ok(!JSON.stringify(answer.body).includes(token), `token in body: ${JSON.stringify(answer.body)}`);
      assert.ok(!JSON.stringify(answer.headers).includes(token), 'token in headers');
    }
  });
});
