import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { holdConnection, waitingReaches } from '../helpers/held-connection.js';
import { API, TestContext, type TestTenant } from '../helpers/test-app.js';

// The embedded default, where one connection serves every tenant (SPEC §10, fair share).
describe("an authenticated request waits for a connection in its tenant's turn", () => {
  // Three of a tenant's requests served at once, so that all three wait for the connection itself.
  const ctx = new TestContext('pglite', { FUNIL_TENANT_CONCURRENCY: '3' });
  let flooder: TestTenant;
  let quiet: TestTenant;
  before(async () => {
    await ctx.start();
    flooder = await ctx.tenant('Flooder');
    quiet = await ctx.tenant('Quiet');
  });
  after(() => ctx.stop());

  it("answers a quiet tenant's list after one of the flooder's queued lists, not after all of them", async () => {
    // Each token looked up (and cached) first: from here on each list is one query.
    for (const tenant of [flooder, quiet]) {
      assert.equal((await ctx.request('GET', `${API}/leads?limit=1`, { token: tenant.token })).status, 200);
    }
    const release = await holdConnection(ctx.database);
    const answered: string[] = [];
    const list = (label: string, tenant: TestTenant) =>
      ctx.request('GET', `${API}/leads?limit=5`, { token: tenant.token }).then((answer) => {
        assert.equal(answer.status, 200);
        answered.push(label);
      });
    const flood = [1, 2, 3].map((i) => list(`flooder ${i}`, flooder));
    await waitingReaches(ctx.database, 3);
    const calm = list('quiet', quiet);
    await waitingReaches(ctx.database, 4);
    await release();
    await Promise.all([...flood, calm]);
    assert.deepEqual(answered, ['flooder 1', 'quiet', 'flooder 2', 'flooder 3']);
  });

  it("looks a quiet tenant's new token up in a line of its own, not behind the flooder's lookups", async () => {
    // Tokens this instance has never seen: each request's first query is its token's lookup.
    const [flooderToken, quietToken] = await Promise.all([
      ctx.token(flooder.id, ['leads:read']),
      ctx.token(quiet.id, ['leads:read']),
    ]);
    const release = await holdConnection(ctx.database);
    const answered: string[] = [];
    const list = (label: string, token: string) =>
      ctx.request('GET', `${API}/leads?limit=5`, { token }).then((answer) => {
        assert.equal(answer.status, 200);
        answered.push(label);
      });
    const flood = [1, 2, 3].map((i) => list(`flooder ${i}`, flooderToken.token));
    await waitingReaches(ctx.database, 3);
    const calm = list('quiet', quietToken.token);
    await waitingReaches(ctx.database, 4);
    await release();
    await Promise.all([...flood, calm]);
    assert.deepEqual(answered, ['flooder 1', 'quiet', 'flooder 2', 'flooder 3']);
  });
});
