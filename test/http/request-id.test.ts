import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { ADMIN_API, ADMIN_TOKEN, API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeEachBackend('X-Request-Id', (ctx) => {
  let tenant: TestTenant;
  before(async () => {
    tenant = await ctx.tenant();
  });

  it('is on every answer: 200, 201, 400, 403, 404, 413, 415, admin and probes (SPEC §1.4)', async () => {
    const answers = {
      200: await ctx.request('GET', `${API}/leads`, { token: tenant.token }),
      201: await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'L', phone: '1' } }),
      400: await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'L' } }),
      403: await ctx.request('GET', `${API}/leads`),
      404: await ctx.request('GET', `${API}/leads/not-a-uuid`, { token: tenant.token }),
      413: await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: 'x'.repeat(1024 * 1024 + 1) }),
      415: await ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        body: '{}',
        headers: { 'content-type': 'text/plain' },
      }),
      'unknown route': await ctx.request('GET', '/nope'),
      admin: await ctx.request('GET', `${ADMIN_API}/tenants`, { token: ADMIN_TOKEN }),
      'admin 403': await ctx.request('GET', `${ADMIN_API}/tenants`),
      health: await ctx.request('GET', '/health'),
      ready: await ctx.request('GET', '/ready'),
    };
    const ids = new Set<string>();
    for (const [expected, res] of Object.entries(answers)) {
      if (/^\d+$/.test(expected)) assert.equal(res.status, Number(expected), expected);
      const id = res.headers['x-request-id'];
      assert.equal(typeof id, 'string', `${expected} has no X-Request-Id`);
      assert.match(id as string, UUID, expected);
      ids.add(id as string);
    }
    assert.equal(ids.size, Object.keys(answers).length, 'request ids repeat');
  });

  it('echoes a sane incoming id of up to 128 characters (SPEC §1.4)', async () => {
    const sane = ['abc-123', 'trace.id:42_x-Y', 'A'.repeat(128), '01890a5d-ac96-774b-bcce-b302099a8057', '7'];
    for (const incoming of sane) {
      const ok = await ctx.request('GET', `${API}/leads`, {
        token: tenant.token,
        headers: { 'x-request-id': incoming },
      });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['x-request-id'], incoming);
      const refused = await ctx.request('GET', `${API}/leads`, { headers: { 'x-request-id': incoming } });
      assert.equal(refused.status, 403);
      assert.equal(refused.headers['x-request-id'], incoming);
    }
  });

  it('replaces an insane incoming id with a fresh one (SPEC §1.4)', async () => {
    const insane = [
      'A'.repeat(129),
      'has space',
      'line%0Abreak',
      'tab\there',
      'ação',
      '<script>',
      'a/b',
      'x"y',
      '',
      ' ',
    ];
    for (const incoming of insane) {
      const res = await ctx.request('GET', `${API}/leads`, {
        token: tenant.token,
        headers: { 'x-request-id': incoming },
      });
      assert.equal(res.status, 200);
      const answered = res.headers['x-request-id'];
      assert.notEqual(answered, incoming);
      assert.match(String(answered), UUID, JSON.stringify(incoming));
    }
  });

  it('never echoes repeated X-Request-Id headers joined into one (SPEC §1.4)', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': ['one', 'two'] } });
    assert.equal(res.statusCode, 200);
    const answered = res.headers['x-request-id'];
    assert.equal(typeof answered, 'string');
    assert.ok(answered === 'one' || UUID.test(String(answered)), `answered ${answered}`);
  });
});
