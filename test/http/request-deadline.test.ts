import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError } from '../helpers/assert-error.js';
import { holdConnection } from '../helpers/held-connection.js';
import { sleep } from '../helpers/http-client.js';
import { RawConnection } from '../helpers/raw-http.js';
import { API, TestContext, type TestTenant } from '../helpers/test-app.js';

describe('the request deadline (FUNIL_REQUEST_TIMEOUT_MS; SPEC §2: answered within 5 s)', () => {
  const ctx = new TestContext('pglite', { FUNIL_REQUEST_TIMEOUT_MS: '1000' });
  let tenant: TestTenant;
  before(async () => {
    await ctx.start();
    tenant = await ctx.tenant();
  });
  after(() => ctx.stop());

  it('answers 503 service_unavailable with Retry-After when the database keeps a request waiting past it', async () => {
    // The embedded database's one connection, held by a transaction that takes its time.
    const release = await holdConnection(ctx.database);
    const started = performance.now();
    const res = await ctx.request('GET', `${API}/leads`, { token: tenant.token });
    const tookMs = performance.now() - started;
    await release();
    assertError(res, 503, 'service_unavailable');
    assert.match(String(res.headers['retry-after']), /^\d+$/);
    // By the deadline, not by the connection's release (after the answer): within the SPEC's 5 s with
    // room for a loaded CI machine, where a turn of the event loop once took 800 ms (1,821 ms seen).
    assert.ok(tookMs >= 900 && tookMs < 3_000, `answered after ${Math.round(tookMs)} ms`);
  });

  it('answers each of several requests kept waiting at once, while others come and go around them', async () => {
    const release = await holdConnection(ctx.database);
    try {
      const started = performance.now();
      const held = Array.from({ length: 3 }, () => ctx.request('GET', `${API}/leads`, { token: tenant.token }));
      // Answered at once (no token, no such route) while the three wait: they enter and leave the
      // requests in flight around the waiting ones, in an order of their own.
      for (let round = 0; round < 5; round++) {
        const quick = await Promise.all([
          ctx.request('GET', `${API}/leads`),
          ctx.request('GET', `${API}/no-such-route`, { token: tenant.token }),
          ctx.request('GET', `${API}/customers`),
        ]);
        assert.deepEqual(
          quick.map((answer) => answer.status),
          [403, 404, 403],
        );
      }
      const answers = await Promise.all(held);
      const tookMs = performance.now() - started;
      for (const answer of answers) assertError(answer, 503, 'service_unavailable');
      assert.ok(tookMs < 1_800, `answered after ${Math.round(tookMs)} ms`);
    } finally {
      await release();
    }
  });

  it('does not count the time a client takes to send its body, and counts the rest for writes too', async () => {
    await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    const address = ctx.app.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const body = JSON.stringify({ name: 'Slow upload', phone: '1' });
    const connection = await RawConnection.open(url);
    try {
      connection.write(
        `POST ${API}/leads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tenant.token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 5)}`,
      );
      await sleep(1_500);
      connection.write(body.slice(5));
      const created = await connection.readAnswer();
      assert.equal(created.status, 201, JSON.stringify(created.body));

      // The same write, its body sent at once, while the database keeps it waiting.
      const release = await holdConnection(ctx.database);
      const started = performance.now();
      connection.write(
        `POST ${API}/leads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tenant.token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      const refused = await connection.readAnswer();
      const tookMs = performance.now() - started;
      await release();
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'service_unavailable');
      assert.ok(tookMs < 1_800, `answered after ${Math.round(tookMs)} ms`);
    } finally {
      connection.destroy();
    }
  });
});
