/**
 * SPEC §23 on a real server process (issue 45's performance questions): an import of N generated
 * leads (1,000,000 on PostgreSQL, 100,000 on the embedded database) — rows per second, against the
 * rows per second of single `POST /leads` measured by wrk in the same run; the server's peak RSS;
 * and the latency of a quiet tenant's requests while it runs, against the same requests on the idle
 * server.
 *
 *   npm run build && FUNIL_BENCH_DATABASE_URL=postgres://… npx tsx bench/imports.ts [--rows N] [--backend embedded|postgres] [--results DIR]
 *   On PostgreSQL (a database of its own, dropped after) when FUNIL_BENCH_DATABASE_URL (else
 *   FUNIL_TEST_DATABASE_URL) is set, with 1,000,000 rows; else, or with `--backend embedded`, on
 *   PGlite (a scratch data directory) with 100,000. `npm run bench` ends with both.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { PROCESS_ADMIN_TOKEN, tenantWithToken } from '../test/helpers/admin-api.js';
import { withAdminClient, withDatabase } from '../test/helpers/postgres-admin.js';
import { quantile } from '../test/helpers/quantile.js';
import { benchPostgresUrl } from './bench-database.js';
import { PeakRss, statusKb } from './throughput/proc.js';
import { freePort, npmStartFlags, type RunningServer, startServer } from './throughput/server-process.js';

const API = '/api/external/v1';
const root = new URL('..', import.meta.url).pathname;
const { values: options } = parseArgs({
  options: {
    rows: { type: 'string' },
    backend: { type: 'string' },
    results: { type: 'string', default: 'bench/results' },
  },
});
const serverUrl = options.backend === 'embedded' ? undefined : benchPostgresUrl();
if (options.backend === 'postgres' && !serverUrl) throw new Error('--backend postgres: set FUNIL_BENCH_DATABASE_URL');
const rows = Number(options.rows ?? (serverUrl ? 1_000_000 : 100_000));
const backend = serverUrl ? 'postgres' : 'pglite';
const SINGLES_SECONDS = 15;
const PROBE_EVERY_MS = 25;

/** The CSV of `count` leads, made as it is read (never whole in memory). */
function csvOf(count: number): Readable {
  return Readable.from(
    (function* () {
      yield 'name,email,phone,source,score,custom.plan\n';
      const batch: string[] = [];
      for (let i = 1; i <= count; i++) {
        batch.push(
          `Lead ${i},lead${i}@import.example,(11) 9${String(i % 10_000_000).padStart(7, '0')}-00,bench,${i % 101},${i % 2 ? 'pro' : 'free'}\n`,
        );
        if (batch.length === 1_000) {
          yield batch.join('');
          batch.length = 0;
        }
      }
      if (batch.length > 0) yield batch.join('');
    })(),
  );
}

/** Streams `body` to `POST /imports`; the import's id. */
function upload(server: RunningServer, token: string, body: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}${API}/imports?resource=lead`,
      { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () =>
          res.statusCode === 202
            ? resolve((JSON.parse(text) as { id: string }).id)
            : reject(new Error(`${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', reject);
    body.pipe(req);
  });
}

/** A quiet tenant's requests, one every PROBE_EVERY_MS (a list page, then a create), timed until stopped. */
function quietTenant(server: RunningServer, token: string) {
  const latencies: number[] = [];
  let stopped = false;
  let n = 0;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      const create = n++ % 2 === 1;
      const res = await fetch(`${server.url}${API}/leads${create ? '' : '?limit=20'}`, {
        method: create ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: create ? JSON.stringify({ name: 'Quiet', email: `quiet${n}@x.example` }) : undefined,
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), count: latencies.length };
    },
  };
}

/** Single POST /leads by wrk (2 threads, 16 connections) for SINGLES_SECONDS: requests per second. */
function singlesPerSecond(server: RunningServer, token: string): Promise<number> {
  const script = join(tmpdir(), `funil-import-singles-${process.pid}.lua`);
  return writeFile(
    script,
    `counter = 0
request = function()
  counter = counter + 1
  local body = '{"name":"Single","email":"single' .. counter .. '-' .. math.random(1e9) .. '@x.example"}'
  return wrk.format("POST", "${API}/leads", {["authorization"]="Bearer ${token}", ["content-type"]="application/json"}, body)
end`,
  ).then(
    () =>
      new Promise((resolve, reject) => {
        const wrk = spawn('wrk', ['-t2', '-c16', `-d${SINGLES_SECONDS}s`, '-s', script, server.url], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        wrk.stdout.on('data', (chunk) => {
          out += chunk;
        });
        wrk.on('exit', () => {
          const match = /Requests\/sec:\s+([\d.]+)/.exec(out);
          if (match) resolve(Number(match[1]));
          else reject(new Error(`wrk: ${out}`));
        });
      }),
  );
}

async function waitForImport(server: RunningServer, token: string, id: string) {
  for (;;) {
    const res = await fetch(`${server.url}${API}/imports/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { status: string; processed: number; created: number; failed: number };
    if (['succeeded', 'failed', 'cancelled'].includes(body.status)) return body;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** A database of the run's own on the PostgreSQL server at `url` (the server migrates it), dropped after. */
async function scratchDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `funil_benchimport_${randomBytes(4).toString('hex')}`;
  await withAdminClient(url, (client) => client.query(`create database ${name}`));
  return {
    url: withDatabase(url, name),
    drop: async () => {
      await withAdminClient(url, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/** The server must be on the PostgreSQL given, not on a data directory: its tenants are there. */
async function assertServedFrom(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('select count(*) as n from tenants');
    if (Number(rows[0]?.n) < 2) throw new Error('the server is not on FUNIL_BENCH_DATABASE_URL');
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'funil-import-bench-'));
  const scratch = serverUrl ? await scratchDatabase(serverUrl) : undefined;
  const postgresUrl = scratch?.url;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    FUNIL_ADMIN_TOKEN: PROCESS_ADMIN_TOKEN,
    FUNIL_BOOTSTRAP: 'false',
    FUNIL_RATE_LIMIT: '10000000',
    FUNIL_DATA_DIR: dataDir,
    ...(postgresUrl ? { DATABASE_URL: postgresUrl } : {}),
  };
  const server = await startServer(
    {
      label: 'funil',
      args: [...npmStartFlags(root), 'dist/server.js'],
      env,
      logFile: join(dataDir, 'server.log'),
      cwd: root,
    },
    await freePort(),
  );
  try {
    const loader = await tenantWithToken(server, 'Loader', ['leads:read', 'leads:write', 'fields:write']);
    const quiet = await tenantWithToken(server, 'Quiet', ['leads:read', 'leads:write']);
    if (postgresUrl) await assertServedFrom(postgresUrl);
    const fieldRes = await fetch(`${server.url}${API}/fields`, {
      method: 'POST',
      headers: { authorization: `Bearer ${loader.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ resource: 'lead', key: 'plan', label: 'Plan', type: 'select', options: ['free', 'pro'] }),
    });
    if (fieldRes.status !== 201) throw new Error(`field: ${fieldRes.status}`);

    const singles = await singlesPerSecond(server, quiet.token);
    const idleProbe = quietTenant(server, quiet.token);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const idle = await idleProbe.stop();

    // Written before the clock starts: making it would take this process's event loop from the probe.
    const file = join(dataDir, 'import.csv');
    await pipeline(csvOf(rows), createWriteStream(file));
    const rssBefore = (statusKb(server.pid, 'VmRSS') ?? Number.NaN) / 1024;
    const rss = new PeakRss(server.pid);
    const busyProbe = quietTenant(server, quiet.token);
    const started = performance.now();
    const id = await upload(server, loader.token, createReadStream(file));
    const uploadMs = performance.now() - started;
    const done = await waitForImport(server, loader.token, id);
    const totalMs = performance.now() - started;
    const busy = await busyProbe.stop();
    const peakMb = rss.stop();
    const rowsPerSecond = rows / (totalMs / 1000);
    const report = [
      `# Import of ${rows.toLocaleString('en')} leads (${backend}), ${new Date().toISOString()}`,
      '',
      `Command: \`${postgresUrl ? 'FUNIL_BENCH_DATABASE_URL=… ' : ''}npx tsx bench/imports.ts --rows ${rows}${postgresUrl ? '' : ' --backend embedded'}\` (after \`npm run build\`), a server started as \`npm start\` runs it, on this machine (2 cores); wrk on the same machine.`,
      '',
      '| measure | value |',
      '| --- | --- |',
      `| import: status | ${done.status} (${done.created} created, ${done.failed} failed) |`,
      `| upload (file stored) | ${(uploadMs / 1000).toFixed(1)} s |`,
      `| import, upload to last row | ${(totalMs / 1000).toFixed(1)} s |`,
      `| rows per second | ${Math.round(rowsPerSecond).toLocaleString('en')} |`,
      `| single POST /leads per second (wrk -t2 -c16, ${SINGLES_SECONDS} s) | ${Math.round(singles).toLocaleString('en')} |`,
      `| import ÷ singles | ${(rowsPerSecond / singles).toFixed(1)}× |`,
      `| server RSS before the import → its peak during it | ${rssBefore.toFixed(0)} → ${peakMb.toFixed(0)} MB |`,
      `| quiet tenant, idle server: p50 / p95 (${idle.count} requests) | ${idle.p50.toFixed(1)} / ${idle.p95.toFixed(1)} ms |`,
      `| quiet tenant, during the import: p50 / p95 (${busy.count} requests) | ${busy.p50.toFixed(1)} / ${busy.p95.toFixed(1)} ms |`,
      `| p95 during ÷ idle | ${(busy.p95 / idle.p95).toFixed(2)}× |`,
      '',
    ].join('\n');
    console.log(report);
    await writeFile(join(options.results, `imports-${backend}.md`), report);
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
    await scratch?.drop();
  }
}

await main();
