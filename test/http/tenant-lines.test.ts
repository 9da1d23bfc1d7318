import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectionWaitTimeout } from '../../src/db/connection-queue.js';
import { RateCounters } from '../../src/http/rate-counters.js';
import { type Place, TenantLines } from '../../src/http/tenant-lines.js';
import { holdConnection, waitingReaches } from '../helpers/held-connection.js';
import { API, TestContext, type TestTenant } from '../helpers/test-app.js';

const placeOf = (lines: TenantLines, tenant: string): Place => {
  const place = lines.join(tenant);
  assert.ok(typeof place === 'object', `a place for ${tenant}, not "${String(place)}"`);
  return place;
};

describe("a tenant's line (SPEC §10: fair share by waiting in line)", () => {
  it('serves `share` requests at once and the rest first come, first served, as places are given back', async () => {
    const lines = new TenantLines({ share: 2, maxWaiting: 10, boundMs: 60_000 });
    const places = Array.from({ length: 5 }, () => placeOf(lines, 't'));
    const served: number[] = [];
    const waits = places.map((place, i) => (place.serve(5_000) ?? Promise.resolve()).then(() => served.push(i)));
    await sleep(5);
    assert.deepEqual(served, [0, 1]);
    assert.deepEqual(lines.stateOf('t'), { held: 5, serving: 2, waiting: 3 });
    places[1]?.leave();
    await sleep(5);
    assert.deepEqual(served, [0, 1, 2]);
    places[0]?.leave();
    places[2]?.leave();
    await Promise.all(waits);
    assert.deepEqual(served, [0, 1, 2, 3, 4]);
    for (const place of places) place.leave();
    assert.deepEqual(lines.stateOf('t'), { held: 0, serving: 0, waiting: 0 });
  });

  it("keeps tenants apart: one tenant's full line never delays or refuses another's request", () => {
    const lines = new TenantLines({ share: 1, maxWaiting: 2, boundMs: 60_000 });
    for (let i = 0; i < 3; i++) placeOf(lines, 'busy');
    assert.equal(lines.join('busy'), 'full');
    const quiet = placeOf(lines, 'quiet');
    assert.equal(quiet.serve(1_000), undefined, 'served at once');
  });

  it('serves at most `capacity` requests of all tenants at once, the lines taking turns for the places given back', async () => {
    const lines = new TenantLines({ share: 2, capacity: 2, maxWaiting: 10, boundMs: 60_000 });
    const served: string[] = [];
    const ask = (tenant: string, label: string) => {
      const place = placeOf(lines, tenant);
      const waiting = place.serve(5_000) ?? Promise.resolve();
      return { place, done: waiting.then(() => served.push(label)) };
    };
    const busy = ['a1', 'a2', 'a3', 'a4', 'a5'].map((label) => ask('a', label));
    const quiet = ask('b', 'b1');
    await sleep(5);
    assert.deepEqual(served, ['a1', 'a2']);
    // The busy line began waiting first: its turn first, then the quiet one's, before the busy one's next.
    busy[0]?.place.leave();
    await sleep(5);
    assert.deepEqual(served, ['a1', 'a2', 'a3']);
    busy[1]?.place.leave();
    await sleep(5);
    assert.deepEqual(served, ['a1', 'a2', 'a3', 'b1'], 'the quiet tenant waited for one of the busy one, not all');
    quiet.place.leave();
    busy[2]?.place.leave();
    await sleep(5);
    assert.deepEqual(served, ['a1', 'a2', 'a3', 'b1', 'a4', 'a5']);
    for (const { place } of busy) place.leave();
    await Promise.all([...busy.map((b) => b.done), quiet.done]);
    assert.deepEqual(lines.stateOf('a'), { held: 0, serving: 0, waiting: 0 });
  });

  /** Serves `count` requests of `tenant` one after another, each for about `ms`; leaves one in service. */
  async function servedFor(lines: TenantLines, tenant: string, count: number, ms: number): Promise<Place> {
    let serving = placeOf(lines, tenant);
    serving.serve(1_000);
    for (let i = 0; i < count; i++) {
      const next = placeOf(lines, tenant);
      const waiting = next.serve(5_000);
      await sleep(ms);
      serving.leave();
      await waiting;
      serving = next;
    }
    return serving;
  }

  it('refuses at once a request that could not be answered within the bound, from the measured service time', async () => {
    const lines = new TenantLines({ share: 1, maxWaiting: 100, boundMs: 150 });
    // Five served in ~60 ms each: the tenant's service time; one in service now.
    await servedFor(lines, 't', 5, 60);
    // The next would wait about 60 ms and be served in 60: a place; the one after, 120 + 60: refused.
    placeOf(lines, 't');
    assert.equal(lines.join('t'), 'slow');
  });

  it("predicts nothing from a cold start's first few times: an ordinary first burst is never refused as slow", async () => {
    const lines = new TenantLines({ share: 1, maxWaiting: 100, boundMs: 150 });
    // Two first requests ten times slower than the bound allows (code compiled, caches filled).
    await servedFor(lines, 't', 2, 200);
    for (let i = 0; i < 8; i++) placeOf(lines, 't');
  });

  it('never refuses a request that need not wait, however long its own work takes (a big batch)', async () => {
    const lines = new TenantLines({ share: 1, maxWaiting: 10, boundMs: 50 });
    const slow = placeOf(lines, 't');
    slow.serve(1_000);
    await sleep(80);
    slow.leave(); // served past the bound
    for (let i = 0; i < 3; i++) {
      const alone = placeOf(lines, 't');
      assert.equal(alone.serve(1_000), undefined, 'served at once');
      await sleep(80);
      alone.leave();
    }
  });

  it('gives up waiting after the time allowed (ConnectionWaitTimeout: a 503), and its place is not served later', async () => {
    const lines = new TenantLines({ share: 1, maxWaiting: 10, boundMs: 60_000 });
    const first = placeOf(lines, 't');
    first.serve(1_000);
    const late = placeOf(lines, 't');
    await assert.rejects(late.serve(30) as Promise<void>, ConnectionWaitTimeout);
    const next = placeOf(lines, 't');
    const nextWait = next.serve(1_000);
    first.leave();
    await nextWait;
    assert.equal(next.served, true);
    assert.equal(late.served, false);
    late.leave();
    next.leave();
    assert.deepEqual(lines.stateOf('t'), { held: 0, serving: 0, waiting: 0 });
  });

  it('takes a request that ends while it waits out of the line', async () => {
    const lines = new TenantLines({ share: 1, maxWaiting: 10, boundMs: 60_000 });
    const first = placeOf(lines, 't');
    first.serve(1_000);
    const gone = placeOf(lines, 't');
    gone.serve(1_000);
    const next = placeOf(lines, 't');
    const nextWait = next.serve(1_000);
    gone.leave();
    first.leave();
    await nextWait;
    assert.deepEqual(lines.stateOf('t'), { held: 1, serving: 1, waiting: 0 });
  });
});

describe('a refusal says when to come back, and keeps to it (SPEC §10)', () => {
  it('keeps a counter refused for the whole seconds its Retry-After gives', async () => {
    const counters = new RateCounters();
    const incr = () =>
      new Promise<{ current: number; ttl: number }>((resolve) =>
        counters.incr('ip:192.0.2.1', (_error, state) => resolve(state), 1_300, 1),
      );
    assert.equal((await incr()).current, 1);
    const refused = await incr();
    assert.equal(refused.current, 2);
    const retryAfter = Math.ceil(refused.ttl / 1000);
    assert.equal(refused.ttl, retryAfter * 1000, 'the window closes when Retry-After says');
    await sleep(1_400); // past the window's own end (1.3 s), not yet past Retry-After (2 s)
    assert.ok((await incr()).current > 1, 'still refused');
  });
});

describe('fair share over HTTP: waiting, not refusing (SPEC §10)', () => {
  const ctx = new TestContext('pglite', {
    FUNIL_TENANT_CONCURRENCY: '1',
    FUNIL_TENANT_QUEUE: '2',
    FUNIL_RATE_LIMIT: '100',
  });
  let tenant: TestTenant;
  before(async () => {
    await ctx.start();
    tenant = await ctx.tenant();
  });
  after(() => ctx.stop());
  const list = () => ctx.request('GET', `${API}/leads?limit=5`, { token: tenant.token });

  it("makes a tenant's requests past its share wait, and refuses only past its line, with 429 that counts against no budget", async () => {
    const before = await list();
    assert.equal(before.status, 200);
    const remaining = Number(before.headers['ratelimit-remaining']);
    const release = await holdConnection(ctx.database);
    // One served (waiting for the connection), two in line: all are answered once the connection is back.
    const waiting = [list(), list(), list()];
    await waitingReaches(ctx.database, 1);
    await sleep(20);
    const refused = await list();
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(refused.body.error, /esperando/);
    assert.equal(
      Number(refused.headers['ratelimit-remaining']),
      remaining - 3,
      "the token's counters, not counting the refusal",
    );
    await release();
    const answers = await Promise.all(waiting);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200],
    );
    const afterwards = await list();
    assert.equal(Number(afterwards.headers['ratelimit-remaining']), remaining - 4, 'the refusal was not counted');
    const metrics = await ctx.request('GET', '/metrics');
    assert.match(metrics.text, /funil_tenant_line_refusals_total\{reason="full"\} 1\n/);
    assert.match(metrics.text, /funil_tenant_line_waiting_requests 0\n/);
  });
});
