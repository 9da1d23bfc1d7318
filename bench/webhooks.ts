/**
 * Webhook delivery (SPEC §15), measured end to end against a receiver on 127.0.0.1: the delay from
 * a change to its delivery (the event's `occurredAt`, taken in the writing statement, to the
 * request's arrival) with the queue idle and under W1 load (wrk, 16 connections), and deliveries
 * per second draining a backlog of batch-created leads.
 *
 *   npm run bench:webhooks                      # PostgreSQL when FUNIL_BENCH_DATABASE_URL is set, else embedded
 *   npm run bench:webhooks -- --backend embedded --results /tmp/hooks
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PROCESS_ADMIN_TOKEN, tenantWithToken } from '../test/helpers/admin-api.js';
import { withAdminClient, withDatabase } from '../test/helpers/postgres-admin.js';
import { quantile } from '../test/helpers/quantile.js';
import { benchPostgresUrl, CAPACITY_SETTINGS } from './bench-database.js';
import { freePort, npmStartFlags, startServer } from './throughput/server-process.js';

const ROOT = resolve(import.meta.dirname, '..');
/** wrk's connections creating leads. */
const LOAD_CONNECTIONS = 16;
const API = '/api/external/v1';
const { values: options } = parseArgs({
  options: {
    backend: { type: 'string' },
    results: { type: 'string', default: join(ROOT, 'bench', 'results') },
    'load-seconds': { type: 'string', default: '10' },
  },
});
const url = benchPostgresUrl();
const backend = options.backend ?? (url ? 'postgres' : 'embedded');
if (backend === 'postgres' && !url) throw new Error('--backend postgres needs FUNIL_BENCH_DATABASE_URL');

interface Arrival {
  id: string;
  occurredAt: number;
  arrivedAt: number;
}

const arrivals: Arrival[] = [];
const receiver = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => {
    body += chunk;
  });
  request.on('end', () => {
    const event = JSON.parse(body) as { id: string; occurredAt: string };
    arrivals.push({ id: event.id, occurredAt: Date.parse(event.occurredAt), arrivedAt: Date.now() });
    response.writeHead(204).end();
  });
});
await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const work = await mkdtemp(join(tmpdir(), 'funil-bench-hooks-'));
const databaseName = `funil_benchhooks_${process.pid}`;
const storage: Record<string, string> =
  backend === 'postgres'
    ? { DATABASE_URL: withDatabase(url as string, databaseName) }
    : { FUNIL_DATA_DIR: join(work, 'data') };
if (backend === 'postgres') await withAdminClient(url as string, (c) => c.query(`create database ${databaseName}`));

const server = await startServer(
  {
    label: 'funil',
    args: [...npmStartFlags(ROOT), 'dist/server.js'],
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      ...CAPACITY_SETTINGS,
      FUNIL_ADMIN_TOKEN: PROCESS_ADMIN_TOKEN,
      FUNIL_WEBHOOKS_ALLOW_HTTP: 'true',
      FUNIL_WEBHOOKS_ALLOW_PRIVATE: 'true',
      ...storage,
    },
    logFile: join(work, 'server.log'),
    cwd: ROOT,
  },
  await freePort(),
);

const lines: string[] = [];
try {
  const { token } = await tenantWithToken(server, 'Bench', ['leads:read', 'leads:write', 'webhooks:write']);
  const call = (method: string, path: string, body: unknown) =>
    fetch(`${server.url}${API}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const hook = await call('POST', '/webhooks', { url: receiverUrl, events: ['lead.created'] });
  if (hook.status !== 201) throw new Error(`subscribe: ${hook.status} ${await hook.text()}`);
  const lead = (n: number) => ({ name: `Bench ${n}`, email: `bench${n}@example.com`, source: 'bench' });

  // Idle: one change at a time, 20 a second.
  const idleFrom = arrivals.length;
  for (let n = 0; n < 200; n++) {
    await call('POST', '/leads', lead(n));
    await new Promise((done) => setTimeout(done, 50));
  }
  await delivered(idleFrom + 200);
  const idle = delays(arrivals.slice(idleFrom));

  // Under W1: wrk creates leads as fast as 16 connections can for the load's duration; then at a
  // steady fraction of that rate (issue 46: half on PostgreSQL, a quarter embedded).
  const seconds = Number(options['load-seconds']);
  const full = await underLoad(token, seconds);
  const fraction = backend === 'postgres' ? 0.5 : 0.25;
  const paced = await underLoad(token, seconds, (full.rps * fraction) / LOAD_CONNECTIONS);

  // A backlog: 3,000 leads in 30 batches, then how fast they all arrive.
  const backlogFrom = arrivals.length;
  const started = Date.now();
  for (let b = 0; b < 30; b++) {
    await call('POST', '/leads/batch', { items: Array.from({ length: 100 }, (_, n) => lead(b * 100 + n)) });
  }
  await delivered(backlogFrom + 3_000, 300_000);
  const last = arrivals[arrivals.length - 1]?.arrivedAt ?? started;
  const perSecond = 3_000 / ((last - started) / 1000);

  lines.push(
    '# Webhook delivery (`npm run bench:webhooks`)',
    '',
    `Run ${new Date().toISOString()}, backend ${backend}, one instance (production build), a receiver on 127.0.0.1 answering 204 at once.`,
    'Delay: from the event’s `occurredAt` (taken by the writing statement) to the delivery’s arrival.',
    '',
    'Deliveries/s: those that arrived while the load lasted, per second of it, beside the creates/s of the same load.',
    '',
    '| situation | creates/s | deliveries/s while loaded | ÷ creates | delivered | delay p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row('idle (20 changes/s)', idle),
    loadRow(`under W1 (wrk, ${LOAD_CONNECTIONS} connections, as fast as they go, ${seconds} s)`, full),
    loadRow(`W1 at ${fraction === 0.5 ? 'half' : 'a quarter of'} that rate`, paced),
    '',
    `Backlog: 3,000 leads created by 30 batches of 100, all delivered in ${((last - started) / 1000).toFixed(1)} s: ` +
      `**${Math.round(perSecond)} deliveries/s** (creation included).`,
    '',
  );
} finally {
  await server.stop();
  receiver.close();
  if (backend === 'postgres') {
    await withAdminClient(url as string, (c) => c.query(`drop database if exists ${databaseName} with (force)`));
  }
  await rm(work, { recursive: true, force: true });
}

const report = lines.join('\n');
console.log(report);
await mkdir(options.results as string, { recursive: true });
await writeFile(join(options.results as string, `webhooks-${backend}.md`), report);

async function delivered(count: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (new Set(arrivals.map((a) => a.id)).size < count) {
    if (Date.now() > deadline) throw new Error(`${new Set(arrivals.map((a) => a.id)).size} of ${count} delivered`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

interface Load {
  rps: number;
  /** Deliveries that arrived while the load lasted, per second of it. */
  deliveredPerSec: number;
  delays: number[];
}

/**
 * wrk creating leads on LOAD_CONNECTIONS connections for `seconds`, as fast as they go or, with
 * `perConnection`, each at that many creates a second; then waits for every delivery.
 */
async function underLoad(token: string, seconds: number, perConnection?: number): Promise<Load> {
  const from = arrivals.length;
  const script = join(work, 'post.lua');
  await writeFile(
    script,
    [
      'wrk.method = "POST"',
      `wrk.body = '${JSON.stringify({ name: 'Bench', email: 'bench@example.com', source: 'bench' })}'`,
      'wrk.headers["Content-Type"] = "application/json"',
      `wrk.headers["Authorization"] = "Bearer ${token}"`,
      ...(perConnection ? [`function delay() return ${Math.max(1, Math.round(1000 / perConnection))} end`] : []),
    ].join('\n'),
  );
  const began = Date.now();
  const wrk = await run('wrk', [
    '-t1',
    `-c${LOAD_CONNECTIONS}`,
    `-d${seconds}s`,
    '-s',
    script,
    `${server.url}${API}/leads`,
  ]);
  const ended = Date.now();
  const created = Number(/(\d+) requests in/.exec(wrk)?.[1] ?? 0);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(wrk)?.[1] ?? 0);
  await delivered(from + created, 120_000);
  const batch = arrivals.slice(from);
  const inTime = batch.filter((a) => a.arrivedAt <= ended).length;
  return { rps, deliveredPerSec: inTime / ((ended - began) / 1000), delays: delays(batch) };
}

function loadRow(label: string, load: Load): string {
  const at = (q: number) => Math.round(quantile(load.delays, q));
  return (
    `| ${label} | ${Math.round(load.rps)} | ${Math.round(load.deliveredPerSec)} | ` +
    `${(load.deliveredPerSec / load.rps).toFixed(2)}× | ${load.delays.length} | ${at(0.5)} | ${at(0.99)} | ` +
    `${Math.round(load.delays[load.delays.length - 1] ?? 0)} |`
  );
}

function delays(batch: readonly Arrival[]): number[] {
  return batch.map((a) => a.arrivedAt - a.occurredAt).sort((a, b) => a - b);
}

function row(label: string, sorted: readonly number[]): string {
  const at = (q: number) => Math.round(quantile(sorted, q));
  return `| ${label} | – | – | – | ${sorted.length} | ${at(0.5)} | ${at(0.99)} | ${Math.round(sorted[sorted.length - 1] ?? 0)} |`;
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((done, fail) =>
    execFile(command, args, { timeout: 120_000 }, (error, stdout) => (error ? fail(error) : done(stdout))),
  );
}
