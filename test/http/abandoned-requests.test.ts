import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SCOPES } from '../../src/auth/scopes.js';
import { holdConnection, waitingReaches } from '../helpers/held-connection.js';
import { sleep } from '../helpers/http-client.js';
import { RawConnection } from '../helpers/raw-http.js';
import { API, TestContext, type TestTenant } from '../helpers/test-app.js';
import { BACKENDS, skipUnless } from '../helpers/test-database.js';

for (const backend of BACKENDS) {
  describe(`clients that hang up before their tenant is known [${backend}] (SPEC §10)`, {
    skip: skipUnless(backend),
  }, () => {
    const ctx = new TestContext(backend);
    let tenant: TestTenant;
    let url = '';

    before(async () => {
      await ctx.start();
      tenant = await ctx.tenant();
      await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      url = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    });
    after(() => ctx.stop());

    it('take no place in their tenant’s line, and its next clients are served', async () => {
      // Tokens this process has never seen: each request waits for its token's lookup, and its
      // client hangs up meanwhile (a timeout, a load balancer, a process stopped). Once the lookups
      // end, the tenant is known, for requests nobody waits for any more.
      const tokens = await Promise.all(Array.from({ length: 6 }, () => ctx.token(tenant.id, SCOPES)));
      // Every connection held: the lookups wait for one.
      const holds = await Promise.all(
        Array.from({ length: ctx.database.stats().max }, () => holdConnection(ctx.database)),
      );
      const connections = await Promise.all(tokens.map(() => RawConnection.open(url)));
      try {
        for (const [i, { token }] of tokens.entries()) {
          connections[i]?.write(
            `GET ${API}/leads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`,
          );
        }
        await waitingReaches(ctx.database, tokens.length);
        for (const connection of connections) connection.destroy();
        // Their connections' closes reach the server before the lookups end.
        await sleep(100);
      } finally {
        await Promise.all(holds.map((release) => release()));
      }
      await sleep(100);

      // An ordinary client of the same tenant, eight requests at once: every one served.
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          fetch(`${url}${API}/leads?limit=1`, { headers: { authorization: `Bearer ${tenant.token}` } }),
        ),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        Array(8).fill(200),
      );
      const metrics = await (await fetch(`${url}/metrics`)).text();
      assert.match(metrics, /funil_tenant_line_serving_requests 0\n/);
      assert.match(metrics, /funil_tenant_line_waiting_requests 0\n/);
    });
  });
}
