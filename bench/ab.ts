/**
 * Two builds of Funil, or one build under two settings, side by side: CPU per request at one offered
 * rate, rounds alternating (A B, then B A, …), both servers up the whole run on one copy of the
 * bench's data on PostgreSQL. For a change too small to see between two runs of `npm run bench`,
 * where the rounds of one target differ by 10–30 %: here the machine's drift falls on both alike,
 * and the per-round ratios say how far the noise goes.
 *
 *   FUNIL_BENCH_DATABASE_URL=postgres://… npx tsx bench/ab.ts --a ../funil-before [--b .]
 *     [--a-env '{"LOG_LEVEL":"warn"}'] [--b-env JSON] [--workloads W1,W3,W4] [--rounds 5]
 *     [--rate 1000] [--duration 10]
 *
 * --a and --b name checkouts with a build in dist/ (`npm run build`); both are this one by
 * default. A checkout of an earlier commit: `git worktree add ../funil-before HEAD~1`, then in it
 * `ln -s "$OLDPWD/node_modules" . && npm run build`. Each server runs as `npm start` does
 * (production, its flags), with the bench's CAPACITY_SETTINGS. It prints
 * to stderr as it goes and a summary on stdout: medians of µs of the server process's CPU (all its
 * threads, /proc) per request, and B ÷ A round by round.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { benchPostgresUrl, CAPACITY_SETTINGS, median } from './bench-database.js';
import { prepareFixture } from './throughput/fixture.js';
import type { LoadJob } from './throughput/load-job.js';
import { measureWorkload } from './throughput/measure.js';
import { freePort, npmStartFlags, type RunningServer, startServer } from './throughput/server-process.js';
import { WORKLOAD_IDS, type WorkloadId } from './throughput/workloads.js';
import { WrkLoad } from './throughput/wrk-load.js';

const { values: options } = parseArgs({
  options: {
    a: { type: 'string', default: '.' },
    b: { type: 'string', default: '.' },
    'a-env': { type: 'string', default: '{}' },
    'b-env': { type: 'string', default: '{}' },
    workloads: { type: 'string', default: 'W1,W3,W4' },
    rounds: { type: 'string', default: '5' },
    rate: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '10' },
  },
});
const workloads = options.workloads.split(',') as WorkloadId[];
const unknown = workloads.filter((id) => !WORKLOAD_IDS.includes(id));
if (unknown.length) throw new Error(`unknown workload(s) ${unknown.join(', ')}; known: ${WORKLOAD_IDS.join(', ')}`);
const url = benchPostgresUrl();
if (!url) throw new Error('set FUNIL_BENCH_DATABASE_URL (a PostgreSQL server where the user may create databases)');

const fixture = await prepareFixture(url);
const copy = await fixture.copyPostgres();
const work = await mkdtemp(join(tmpdir(), 'funil-ab-'));
const load = new WrkLoad(work);
const servers: Record<'A' | 'B', RunningServer | undefined> = { A: undefined, B: undefined };
const cpu: Record<string, number[]> = {};

const start = async (name: 'A' | 'B', checkout: string, env: string) => {
  const root = resolve(checkout);
  servers[name] = await startServer(
    {
      label: name,
      args: [...npmStartFlags(root), join(root, 'dist', 'server.js')],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        NODE_ENV: 'production',
        DATABASE_URL: copy.location,
        ...CAPACITY_SETTINGS,
        ...(JSON.parse(env) as Record<string, string>),
      },
      logFile: join(work, `${name}.log`),
      cwd: root,
    },
    await freePort(),
  );
  return servers[name] as RunningServer;
};
const job = (server: RunningServer, workload: WorkloadId, durationSec: number, ratePerSec?: number): LoadJob => ({
  url: server.url,
  token: fixture.tenant.token,
  workload,
  data: fixture.data,
  connections: 32,
  warmupSec: 2,
  durationSec,
  ...(ratePerSec ? { ratePerSec } : {}),
});

try {
  const a = await start('A', options.a, options['a-env']);
  const b = await start('B', options.b, options['b-env']);
  // Every route through V8's optimising compiler before anything is measured.
  for (const server of [a, b]) await load.run({ ...job(server, 'W5', 5), warmupSec: 0 }, () => {});
  for (let round = 1; round <= Number(options.rounds); round++) {
    for (const workload of workloads) {
      const pair = [
        ['A', a],
        ['B', b],
      ] as const;
      for (const [name, server] of round % 2 ? pair : [...pair].reverse()) {
        const paced = job(server, workload, Number(options.duration), Number(options.rate));
        const measured = await measureWorkload({ server }, load, paced, () => 0, false);
        const us = (measured.cpuMsPerRequest ?? Number.NaN) * 1000;
        const key = `${workload} ${name}`;
        cpu[key] = [...(cpu[key] ?? []), us];
        process.stderr.write(
          `round ${round} ${workload} ${name}: ${us.toFixed(1)} µs/req, ${Math.round(measured.rps)} req/s, ` +
            `errors ${measured.errors + measured.non2xx}\n`,
        );
      }
    }
  }
} finally {
  await load.stop();
  await Promise.all(Object.values(servers).map((server) => server?.stop()));
  await copy.discard();
  await fixture.close();
  await rm(work, { recursive: true, force: true });
}

for (const workload of workloads) {
  const [a, b] = [cpu[`${workload} A`] ?? [], cpu[`${workload} B`] ?? []];
  const ratios = a.map((value, i) => ((b[i] ?? Number.NaN) / value).toFixed(2));
  process.stdout.write(
    `${workload}: A ${median(a).toFixed(1)} µs, B ${median(b).toFixed(1)} µs per request (medians), ` +
      `B − A ${(median(b) - median(a)).toFixed(1)} µs; B ÷ A by round ${ratios.join(' / ')}\n`,
  );
}
