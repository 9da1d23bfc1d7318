import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { assertError } from '../helpers/assert-error.js';
import { ADMIN_API, type Answer, API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const SITE = 'https://www.example.com';
const OTHER_SITE = 'https://app.example.com';
const STRANGER = 'https://evil.example.net';
const NO_SUCH_LEAD = '01900000-0000-7000-8000-000000000000';

const EXPOSED = [
  'etag',
  'link',
  'x-next-cursor',
  'x-request-id',
  'idempotent-replayed',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'retry-after',
  'www-authenticate',
];
const ALLOWED_REQUEST_HEADERS = [
  'authorization',
  'content-type',
  'idempotency-key',
  'if-match',
  'x-request-id',
  'accept-language',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
];

/** A header's comma list, lower-cased, as a browser reads it. */
function listOf(res: Answer, name: string): string[] {
  const value = res.headers[name];
  return value === undefined
    ? []
    : String(value)
        .toLowerCase()
        .split(/\s*,\s*/);
}

function corsHeadersOf(res: Answer): string[] {
  return Object.keys(res.headers).filter((name) => name.startsWith('access-control-'));
}

/** What a browser sends before a cross-origin POST with a token and a JSON body. */
function preflight(origin: string, method = 'POST') {
  return {
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization,content-type,idempotency-key',
    },
  };
}

describeEachBackend(
  'CORS for the listed origins',
  (ctx) => {
    let tenant: TestTenant;

    before(async () => {
      tenant = await ctx.tenant();
    });

    it('lets an allowed origin read an answer: Access-Control-Allow-Origin, Vary and the exposed headers', async () => {
      for (const origin of [SITE, OTHER_SITE]) {
        const res = await ctx.request('GET', `${API}/leads`, { token: tenant.token, headers: { origin } });
        assert.equal(res.status, 200);
        assert.equal(res.headers['access-control-allow-origin'], origin);
        assert.ok(listOf(res, 'vary').includes('origin'));
        assert.deepEqual(listOf(res, 'access-control-expose-headers').sort(), [...EXPOSED].sort());
        // Bearer tokens, not cookies: credentials mode is never allowed.
        assert.equal(res.headers['access-control-allow-credentials'], undefined);
      }
    });

    it('puts the headers on a created lead and on errors too, so the page can read them', async () => {
      const created = await ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        headers: { origin: SITE, 'idempotency-key': 'form-1' },
        body: { name: 'Ana', email: 'ana@example.com' },
      });
      assert.equal(created.status, 201);
      assert.equal(created.headers['access-control-allow-origin'], SITE);
      for (const res of [
        await ctx.request('GET', `${API}/leads`, { headers: { origin: SITE } }),
        await ctx.request('GET', `${API}/leads/${NO_SUCH_LEAD}`, { token: tenant.token, headers: { origin: SITE } }),
      ]) {
        assert.ok(res.status === 403 || res.status === 404);
        assert.equal(res.headers['access-control-allow-origin'], SITE);
      }
    });

    it('answers a preflight with 204 and no token: methods, request headers and max age', async () => {
      for (const url of [`${API}/leads`, `${API}/leads/${NO_SUCH_LEAD}`, `${API}/customers/${NO_SUCH_LEAD}/status`]) {
        const res = await ctx.request('OPTIONS', url, preflight(SITE, 'PUT'));
        assert.equal(res.status, 204, url);
        assert.equal(res.body, '');
        assert.equal(res.headers['access-control-allow-origin'], SITE);
        assert.deepEqual(listOf(res, 'access-control-allow-methods').sort(), ['delete', 'get', 'post', 'put']);
        for (const header of ALLOWED_REQUEST_HEADERS) {
          assert.ok(listOf(res, 'access-control-allow-headers').includes(header), header);
        }
        assert.ok(Number(res.headers['access-control-max-age']) > 0);
        assert.ok(res.headers['x-request-id']);
      }
    });

    it('gives an origin not on the list no Access-Control-Allow-Origin, on a request or a preflight', async () => {
      for (const origin of [STRANGER, 'https://WWW.example.com', `${SITE}:8443`, 'null']) {
        const res = await ctx.request('GET', `${API}/leads`, { token: tenant.token, headers: { origin } });
        assert.equal(res.status, 200);
        assert.deepEqual(corsHeadersOf(res), [], origin);
        const pre = await ctx.request('OPTIONS', `${API}/leads`, preflight(origin));
        assert.deepEqual(corsHeadersOf(pre), [], origin);
        assertError(pre, 404, 'not_found');
      }
    });

    it('is for the external API only: the admin API and the probes get no CORS headers', async () => {
      const health = await ctx.request('GET', '/health', { headers: { origin: SITE } });
      assert.deepEqual(corsHeadersOf(health), []);
      const pre = await ctx.request('OPTIONS', `${ADMIN_API}/tenants`, preflight(SITE));
      assert.deepEqual(corsHeadersOf(pre), []);
      assertError(pre, 404, 'not_found');
    });

    it('treats an OPTIONS that is not a preflight as an unknown route', async () => {
      const res = await ctx.request('OPTIONS', `${API}/leads`, { headers: { origin: SITE } });
      assertError(res, 404, 'not_found');
      assert.deepEqual(corsHeadersOf(res), []);
    });
  },
  { FUNIL_CORS_ORIGINS: `${SITE},${OTHER_SITE}` },
);

describeEachBackend(
  'CORS preflights and the rate limit (SPEC §10)',
  (ctx) => {
    it('does not count preflights against any budget: they never reach the limiter', async () => {
      const tenant = await ctx.tenant();
      for (let i = 0; i < 5; i++) {
        const res = await ctx.request('OPTIONS', `${API}/leads`, preflight(SITE));
        assert.equal(res.status, 204);
        assert.equal(res.headers['ratelimit-limit'], undefined);
      }
      // A token not yet known counts against the address, as a request without one does: the five
      // preflights from that address would have spent its budget of 2 three times over.
      const withToken = await ctx.request('GET', `${API}/leads`, { token: tenant.token, headers: { origin: SITE } });
      assert.equal(withToken.status, 200);
      assert.equal(withToken.headers['ratelimit-remaining'], '1');
      const byAddress = await ctx.request('GET', `${API}/leads`, { headers: { origin: SITE } });
      assert.equal(byAddress.status, 403);
      assert.equal(byAddress.headers['ratelimit-remaining'], '0');
    });
  },
  { FUNIL_CORS_ORIGINS: SITE, FUNIL_RATE_LIMIT: '2' },
);

describeEachBackend(
  'CORS with FUNIL_CORS_ORIGINS=*',
  (ctx) => {
    it('allows any origin, with Access-Control-Allow-Origin: *', async () => {
      const tenant = await ctx.tenant();
      const res = await ctx.request('GET', `${API}/leads`, { token: tenant.token, headers: { origin: STRANGER } });
      assert.equal(res.headers['access-control-allow-origin'], '*');
      const pre = await ctx.request('OPTIONS', `${API}/leads`, preflight(STRANGER));
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], '*');
    });
  },
  { FUNIL_CORS_ORIGINS: '*' },
);

describeEachBackend('CORS when FUNIL_CORS_ORIGINS is not set', (ctx) => {
  it('sends no CORS header at all, and OPTIONS is an unknown route', async () => {
    const tenant = await ctx.tenant();
    const res = await ctx.request('GET', `${API}/leads`, { token: tenant.token, headers: { origin: SITE } });
    assert.equal(res.status, 200);
    assert.deepEqual(corsHeadersOf(res), []);
    assert.equal(res.headers.vary, undefined);
    const pre = await ctx.request('OPTIONS', `${API}/leads`, preflight(SITE));
    assertError(pre, 404, 'not_found');
    assert.deepEqual(corsHeadersOf(pre), []);
  });
});
