/**
 * How Funil behaves past its capacity (SPEC §10): a tenant flooding the service with its most
 * expensive lists next to a quiet tenant; then 200 readers of pages of 1,000 and 20 writers at
 * once, over 50 tenants; then one ordinary client of 32 parallel workers. It reports, per kind of
 * client, the share answered, refused (429, 503) or failed, and the latency of each; speed is a
 * figure here, never a pass or fail. Fair share runs at its defaults; only the per-token rate
 * limit is raised (a tenant may own many tokens).
 *
 *   npm run build && npm run bench:overload [-- --duration 10 --leads 20000 --dist DIR --database-url URL]
 *
 * `--dist` points at another build (a checkout of an older commit, built) to compare before/after
 * on the same machine. `--database-url` runs on PostgreSQL (an empty database of its own) instead
 * of the embedded default. Traffic goes to 127.0.0.1 only; the server is stopped by its PID.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { send } from '../test/helpers/http-client.js';
import { quantile } from '../test/helpers/quantile.js';
import { freePort, npmStartFlags, type RunningServer, startServer } from './throughput/server-process.js';

const ROOT = resolve(import.meta.dirname, '..');
const { values: options } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    leads: { type: 'string', default: '20000' },
    dist: { type: 'string', default: join(ROOT, 'dist') },
    'database-url': { type: 'string' },
    /** Runs only the scenarios named (comma-separated: flood, crowd, ordinary). */
    only: { type: 'string', default: 'flood,crowd,ordinary' },
  },
});
const SCENARIOS = new Set(options.only.split(','));
/** The server's time in garbage collection when last read (serverState). */
let gcSecondsBefore = 0;
/** Each answer's bucket counts when last read (inServer), by method and status of the lead routes. */
let bucketsBefore = new Map<string, Map<number, number>>();
const DATABASE_URL = options['database-url'];
/** The leads of each of the crowd's 50 tenants: a page of 1,000 is a whole page. */
const READER_LEADS = 1_000;
const DURATION_MS = Number(options.duration) * 1000;
const FLOODER_LEADS = Number(options.leads);
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const LEADS = '/api/external/v1/leads';
/** The lists that read the most rows of a large tenant. Every `q` is 3 characters, the least SPEC §6 allows. */
const EXPENSIVE_LISTS = [
  `${LEADS}?q=ema&limit=1000`,
  `${LEADS}?status=won&limit=1000&sort=name`,
  `${LEADS}?source=site-3&limit=1000`,
  `${LEADS}?scoreMin=90&limit=1000&sort=-updatedAt`,
  `${LEADS}?status=won&source=site-3&limit=1000&sort=name`,
  `${LEADS}?scoreMin=99&limit=1000&sort=name`,
];
const SOURCES = ['site-1', 'site-2', 'site-3', 'site-4', 'form'];
const STATUSES = ['new', 'contacted', 'qualified', 'proposal', 'negotiation', 'won', 'lost'];

/** The clients' connections, kept alive as a real integration keeps them. */
const agent = new Agent({ keepAlive: true, maxSockets: 512 });
/** What went wrong with requests that got no answer at all (reported per run, then forgotten). */
const failures = new Set<string>();

interface Sample {
  status: number;
  ms: number;
}

const work = await mkdtemp(join(tmpdir(), 'funil-overload-'));
let server: RunningServer | undefined;
try {
  const port = await freePort();
  server = await startServer(
    {
      label: 'funil',
      args: [...npmStartFlags(ROOT), join(resolve(options.dist), 'server.js')],
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        ...(DATABASE_URL ? { DATABASE_URL } : { FUNIL_DATA_DIR: join(work, 'data') }),
        FUNIL_ADMIN_TOKEN: ADMIN_TOKEN,
        FUNIL_BOOTSTRAP: 'false',
        // Fair share must hold however generous the rate limit: a tenant may own many tokens.
        FUNIL_RATE_LIMIT: '10000000',
        // Any other setting to try, from this command's environment (FUNIL_REQUEST_CONCURRENCY=10 …).
        ...Object.fromEntries(
          Object.entries(process.env).filter(
            (entry): entry is [string, string] => entry[0].startsWith('FUNIL_') && !entry[0].startsWith('FUNIL_BENCH_'),
          ),
        ),
      },
      logFile: join(work, 'server.log'),
      cwd: ROOT,
    },
    port,
  );
  const url = server.url;
  console.log(`server: ${resolve(options.dist)} on ${DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, pid ${server.pid}`);

  const flooder = await tenantToken(url, 'flooder');
  const quiet = await tenantToken(url, 'quiet');
  const readers = await Promise.all(Array.from({ length: 50 }, (_, i) => tenantToken(url, `reader-${i}`)));
  console.log(
    `seeding ${FLOODER_LEADS} leads for the flooder, 200 for the quiet tenant, ${READER_LEADS} for each of 50 readers`,
  );
  await seed(url, flooder, FLOODER_LEADS);
  await seed(url, quiet, 200);
  for (const token of readers) await seed(url, token, READER_LEADS);
  await serverState(url);

  console.log(
    `\n## A tenant floods expensive lists (40 at once) while another works (4 at once), ${DURATION_MS / 1000} s\n`,
  );
  const flood = !SCENARIOS.has('flood')
    ? new Map()
    : await runFor(DURATION_MS, [
        ...loops(40, 'flooder lists', (i) => get(url, flooder, EXPENSIVE_LISTS[i % EXPENSIVE_LISTS.length] as string)),
        ...loops(2, 'quiet reads', () => get(url, quiet, `${LEADS}?limit=20`)),
        ...loops(2, 'quiet writes', (i) => post(url, quiet, i)),
      ]);
  report(flood);
  console.log(`\n${await serverState(url)}`);

  console.log(`\n## 200 readers of pages of 1,000 and 20 writers at once, over 50 tenants, ${DURATION_MS / 1000} s\n`);
  const crowd = !SCENARIOS.has('crowd')
    ? new Map()
    : await runFor(DURATION_MS, [
        ...loops(200, 'readers (limit=1000)', (i) =>
          get(url, readers[i % readers.length] as string, `${LEADS}?limit=1000`),
        ),
        ...loops(20, 'writers', (i) => post(url, readers[i % readers.length] as string, i)),
      ]);
  report(crowd);
  console.log(`\n${await serverState(url)}`);

  console.log(
    `\n## One ordinary client: 32 workers of one token, creates and list pages of 100, ${DURATION_MS / 1000} s\n`,
  );
  const ordinary = !SCENARIOS.has('ordinary')
    ? new Map()
    : await runFor(DURATION_MS, [
        ...loops(16, 'ordinary creates', (i) => post(url, quiet, i)),
        ...loops(16, 'ordinary lists', () => get(url, quiet, `${LEADS}?limit=100`)),
      ]);
  report(ordinary);
  console.log(`\n${await serverState(url)}`);
} finally {
  agent.destroy();
  await server?.stop(10_000);
  await rm(work, { recursive: true, force: true });
}

async function tenantToken(url: string, name: string): Promise<string> {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const tenant = await send(`${url}/api/admin/v1/tenants`, { method: 'POST', headers: admin, json: { name } });
  const token = await send(`${url}/api/admin/v1/tenants/${tenant.body.id}/tokens`, {
    method: 'POST',
    headers: admin,
    json: { name: 'overload', scopes: ['leads:read', 'leads:write', 'customers:read', 'customers:write'] },
  });
  if (token.status !== 201) throw new Error(`could not create a token: ${token.status}`);
  return token.body.token as string;
}

/** In batches of 100, four at a time, each retried as Retry-After says when refused. */
async function seed(url: string, token: string, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const from = next;
        next = Math.min(count, next + 100);
        const items = Array.from({ length: next - from }, (_, k) => {
          const i = from + k;
          return {
            name: `Lead ${i} ${randomBytes(3).toString('hex')}`,
            email: `lead${i}.${randomBytes(3).toString('hex')}@example.com`,
            source: SOURCES[i % SOURCES.length],
            status: STATUSES[i % STATUSES.length],
            score: i % 101,
          };
        });
        const headers = { authorization: `Bearer ${token}`, 'idempotency-key': `seed-${from}` };
        let answer = await send(`${url}${LEADS}/batch`, {
          method: 'POST',
          agent,
          headers,
          json: { items },
          timeoutMs: 60_000,
        });
        while (answer.status === 429 || answer.status === 503) {
          await new Promise((resolve) => setTimeout(resolve, 1000 * Number(answer.headers['retry-after'] ?? 1)));
          answer = await send(`${url}${LEADS}/batch`, {
            method: 'POST',
            agent,
            headers,
            json: { items },
            timeoutMs: 60_000,
          });
        }
        if (answer.status !== 200) throw new Error(`seeding: ${answer.status} ${JSON.stringify(answer.body)}`);
      }
    }),
  );
  agent.destroy();
}

/**
 * A GET whose body is counted, not parsed: 200 clients parsing pages of 1,000 leads would take the
 * two cores from the server they measure.
 */
function get(url: string, token: string, path: string): Promise<Sample> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.once('error', reject);
      res.once('end', () => {
        clearTimeout(timer);
        if (!res.complete) reject(new Error(`${res.statusCode} cut short`));
        else resolve({ status: res.statusCode ?? 0, ms: performance.now() - started });
      });
    });
    const timer = setTimeout(() => req.destroy(new Error('timed out')), 30_000);
    req.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end();
  });
}

async function post(url: string, token: string, i: number): Promise<Sample> {
  const answer = await send(`${url}${LEADS}`, {
    method: 'POST',
    agent,
    headers: { authorization: `Bearer ${token}` },
    json: { name: `Overload ${i}`, phone: '+55 11 99999-0000', source: 'overload' },
    timeoutMs: 30_000,
  });
  return { status: answer.status, ms: answer.ms };
}

interface Loop {
  kind: string;
  run(i: number): Promise<Sample>;
}

function loops(count: number, kind: string, run: (i: number) => Promise<Sample>): Loop[] {
  return Array.from({ length: count }, (_, i) => ({ kind, run: () => run(i) }));
}

/** Each loop sends one request after the other until the time is up; a refused one waits as Retry-After says, at most 1 s. */
async function runFor(durationMs: number, all: Loop[]): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>();
  const until = performance.now() + durationMs;
  await Promise.all(
    all.map(async (loop) => {
      const mine = samples.get(loop.kind) ?? [];
      samples.set(loop.kind, mine);
      for (let i = 0; performance.now() < until; i++) {
        let sample: Sample;
        try {
          sample = await loop.run(i);
        } catch (error) {
          failures.add(String(error));
          sample = { status: 0, ms: Number.NaN };
        }
        mine.push(sample);
        if (sample.status === 429 || sample.status === 503) await new Promise((r) => setTimeout(r, 250));
      }
    }),
  );
  if (failures.size) console.log(`requests that failed without an answer: ${[...failures].slice(0, 5).join('; ')}`);
  failures.clear();
  return samples;
}

/** What the server's own metrics say of the time since the last call: garbage collection, event-loop delay, memory. */
async function serverState(url: string): Promise<string> {
  const text = String((await send(`${url}/metrics`)).body);
  const value = (name: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(name))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  const gcSeconds = value('nodejs_gc_duration_seconds_sum');
  const spent = gcSeconds - gcSecondsBefore;
  gcSecondsBefore = gcSeconds;
  return (
    `${inServer(text)}\n` +
    `server: ${spent.toFixed(1)} s in garbage collection, event-loop delay p99 ` +
    `${(value('nodejs_eventloop_lag_p99_seconds') * 1000).toFixed(0)} ms, max ${(value('nodejs_eventloop_lag_max_seconds') * 1000).toFixed(0)} ms, ` +
    `RSS ${(value('process_resident_memory_bytes') / 2 ** 20).toFixed(0)} MB`
  );
}

/**
 * The server's own p99 since the last call, by method and status of `/leads`, as the upper bound of
 * its histogram bucket: the time from the request read to the answer sent. On two cores the
 * client's clock also counts its own turns on the CPU, which PostgreSQL and the server share.
 */
function inServer(text: string): string {
  // Cumulative counts now, by `method status` and bucket bound; the figures are the growth since the last call.
  const now = new Map<string, Map<number, number>>();
  const line =
    /^funil_http_request_duration_seconds_bucket\{le="([^"]+)",method="(\w+)",route="\/api\/external\/v1\/leads",status="(\d+)"\} (\d+)$/;
  for (const row of text.split('\n')) {
    const match = line.exec(row);
    if (!match) continue;
    const [, le, method, status, count] = match as unknown as [string, string, string, string, string];
    const key = `${method} ${status}`;
    const counts = now.get(key) ?? new Map<number, number>();
    counts.set(le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), Number(count));
    now.set(key, counts);
  }
  const before = bucketsBefore;
  bucketsBefore = now;
  const parts: string[] = [];
  for (const [key, counts] of [...now].sort()) {
    const grown = [...counts]
      .map(([le, n]): [number, number] => [le, n - (before.get(key)?.get(le) ?? 0)])
      .sort((x, y) => x[0] - y[0]);
    const total = grown.at(-1)?.[1] ?? 0;
    if (total === 0) continue;
    const p99 = grown.find(([, n]) => n >= total * 0.99)?.[0] ?? Number.POSITIVE_INFINITY;
    parts.push(`${key}: ${total} answers, p99 ≤ ${Number.isFinite(p99) ? `${p99 * 1000} ms` : 'over 10 s'}`);
  }
  return `in the server (/leads): ${parts.join('; ') || 'none'}`;
}

function report(samples: Map<string, Sample[]>): void {
  console.log(
    '| client | answers | 2xx | 429 | 503 | other | 2xx p50 | 2xx p95 | 2xx p99 | refused p50 | refused p99 | all p99 |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [kind, all] of samples) {
    const ok = all.filter((s) => s.status >= 200 && s.status < 300).map((s) => s.ms);
    const refused = all.filter((s) => s.status === 429 || s.status === 503).map((s) => s.ms);
    const share = (n: number) => `${((100 * n) / Math.max(1, all.length)).toFixed(1)} %`;
    const count = (status: number) => all.filter((s) => s.status === status).length;
    const other = all.length - ok.length - refused.length;
    console.log(
      `| ${kind} | ${all.length} | ${share(ok.length)} | ${share(count(429))} | ${share(count(503))} | ${share(other)} | ` +
        `${ms(quantile(ok, 0.5))} | ${ms(quantile(ok, 0.95))} | ${ms(quantile(ok, 0.99))} | ` +
        `${ms(quantile(refused, 0.5))} | ${ms(quantile(refused, 0.99))} | ` +
        `${ms(
          quantile(
            all.map((s) => s.ms).filter((v) => !Number.isNaN(v)),
            0.99,
          ),
        )} |`,
    );
  }
}

function ms(value: number): string {
  return Number.isNaN(value) ? '–' : `${Math.round(value)} ms`;
}
