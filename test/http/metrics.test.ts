import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { assertForbidden } from '../helpers/assert-error.js';
import { ADMIN_TOKEN, API, describeEachBackend, type TestContext, type TestTenant } from '../helpers/test-app.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';
const NO_SUCH_LEAD = '01900000-0000-7000-8000-000000000000';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format: `name{label="value",…} number` lines, comments skipped. */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/);
    assert.ok(match, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key as string] = value as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with this name and (at least) these labels; 0 when absent. */
function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

async function scrape(ctx: TestContext, headers: Record<string, string> = {}): Promise<Sample[]> {
  const res = await ctx.request('GET', '/metrics', { headers });
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parseMetrics(res.body);
}

/** Runs `work` while every connection of the pool is checked out. */
async function withPoolExhausted<T>(db: Db, connections: number, work: () => Promise<T>): Promise<T> {
  if (connections === 0) return work();
  return db.connection().execute(() => withPoolExhausted(db, connections - 1, work));
}

describeEachBackend('GET /metrics (SPEC §12)', (ctx) => {
  let tenant: TestTenant;

  before(async () => {
    tenant = await ctx.tenant();
  });

  it('counts requests by method, route template and status, never by raw URL', async () => {
    const before = await scrape(ctx);
    await ctx.request('GET', `${API}/leads`, { token: tenant.token });
    await ctx.request('GET', `${API}/leads`, { token: tenant.token });
    await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'Ana', phone: '1' } });
    await ctx.request('GET', `${API}/leads/${NO_SUCH_LEAD}`, { token: tenant.token });
    await ctx.request('GET', `${API}/leads/not-a-uuid`, { token: tenant.token });
    await ctx.request('GET', `${API}/leads`);
    await ctx.request('GET', `/no/such/route/${NO_SUCH_LEAD}`);
    await ctx.request('DELETE', `${API}/no-such-thing`, { token: tenant.token });
    const after = await scrape(ctx);

    const counted = (method: string, route: string, status: string) =>
      sampleValue(after, 'funil_http_requests_total', { method, route, status }) -
      sampleValue(before, 'funil_http_requests_total', { method, route, status });
    assert.equal(counted('GET', `${API}/leads`, '200'), 2);
    assert.equal(counted('POST', `${API}/leads`, '201'), 1);
    assert.equal(counted('GET', `${API}/leads/:id`, '404'), 2);
    assert.equal(counted('GET', `${API}/leads`, '403'), 1);
    assert.equal(counted('GET', 'unmatched', '404'), 1);
    assert.equal(counted('DELETE', 'unmatched', '404'), 1);
    // The scrape before is counted once it has been answered.
    assert.ok(counted('GET', '/metrics', '200') >= 1);

    const routes = new Set(after.filter((s) => s.name.startsWith('funil_http_')).map((s) => s.labels.route));
    for (const route of routes) {
      assert.ok(route !== undefined && !route.includes(NO_SUCH_LEAD) && !route.includes('not-a-uuid'), route);
    }
  });

  it('observes each request in the latency histogram, in seconds, under the same labels', async () => {
    const labels = { method: 'GET', route: `${API}/leads`, status: '200' };
    const samples = await scrape(ctx);
    const count = sampleValue(samples, 'funil_http_request_duration_seconds_count', labels);
    assert.equal(count, sampleValue(samples, 'funil_http_requests_total', labels));
    assert.ok(count >= 2);
    const sum = sampleValue(samples, 'funil_http_request_duration_seconds_sum', labels);
    assert.ok(sum > 0 && sum < 60 * count, `sum ${sum} s for ${count} requests`);

    const buckets = samples
      .filter((s) => s.name === 'funil_http_request_duration_seconds_bucket')
      .filter((s) => s.labels.method === 'GET' && s.labels.route === labels.route && s.labels.status === '200');
    assert.ok(buckets.length > 5);
    assert.equal(buckets.at(-1)?.labels.le, '+Inf');
    assert.equal(buckets.at(-1)?.value, count);
    for (let i = 1; i < buckets.length; i++) {
      assert.ok((buckets[i]?.value ?? 0) >= (buckets[i - 1]?.value ?? 0), 'buckets are cumulative');
    }
  });

  it('reports the database pool: size, open, idle and waiting', async () => {
    const backend = { backend: ctx.backend };
    await sql`select 1`.execute(ctx.db);
    const samples = await scrape(ctx);
    const max = sampleValue(samples, 'funil_db_pool_max_connections', backend);
    if (ctx.backend === 'pglite') assert.equal(max, 1);
    else assert.ok(max >= 1);
    const open = sampleValue(samples, 'funil_db_pool_connections', backend);
    assert.ok(open >= 1 && open <= max, `open ${open} of ${max}`);
    assert.ok(sampleValue(samples, 'funil_db_pool_idle_connections', backend) <= open);
    assert.equal(sampleValue(samples, 'funil_db_pool_waiting_queries', backend), 0);

    // With every connection busy, one more query waits, and the gauge says so.
    let queued: Promise<unknown> | undefined;
    const busy = await withPoolExhausted(ctx.db, max, () => {
      queued = sql`select 1`.execute(ctx.db);
      return scrape(ctx);
    });
    await queued;
    assert.equal(sampleValue(busy, 'funil_db_pool_connections', backend), max);
    assert.equal(sampleValue(busy, 'funil_db_pool_idle_connections', backend), 0);
    assert.ok(sampleValue(busy, 'funil_db_pool_waiting_queries', backend) >= 1);
  });

  it("exports the process's default metrics", async () => {
    const names = new Set((await scrape(ctx)).map((s) => s.name));
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_version_info',
    ]) {
      assert.ok(names.has(name), `${name} missing`);
    }
  });

  it('needs no token and is not rate-limited, like /health', async () => {
    const res = await ctx.request('GET', '/metrics', { headers: { authorization: 'Bearer fnl_short' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['ratelimit-limit'], undefined);
  });
});

describeEachBackend(
  'GET /metrics with FUNIL_METRICS_TOKEN (SPEC §12)',
  (ctx) => {
    it('keeps counters of its own: another app in the same process counted nothing here', async () => {
      const samples = await scrape(ctx, { authorization: `Bearer ${METRICS_TOKEN}` });
      assert.equal(sampleValue(samples, 'funil_http_requests_total', { route: `${API}/leads` }), 0);
    });

    it('answers 403 in the SPEC §2 shape without the token, with another one, or with the admin token', async () => {
      assertForbidden(await ctx.request('GET', '/metrics'));
      for (const token of ['wrong-token', `${METRICS_TOKEN}x`, ADMIN_TOKEN]) {
        const res = await ctx.request('GET', '/metrics', { token, headers: { 'accept-language': 'en' } });
        assertForbidden(res);
        assert.equal(res.body.error, 'Invalid metrics token.');
      }
    });

    it('answers 200 with the metrics to Authorization: Bearer <FUNIL_METRICS_TOKEN>', async () => {
      const res = await ctx.request('GET', '/metrics', { token: METRICS_TOKEN });
      assert.equal(res.status, 200);
      assert.ok(parseMetrics(res.body).some((s) => s.name === 'funil_http_requests_total'));
    });

    it('leaves /health open', async () => {
      assert.equal((await ctx.request('GET', '/health')).status, 200);
    });
  },
  { FUNIL_METRICS_TOKEN: METRICS_TOKEN },
);
