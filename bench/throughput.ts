/**
 * `npm run bench`: Funil's production build against the thinnest server doing the same SQL, and
 * against the HTTP and database ceilings, on the same data and the same request streams.
 * See bench/README.md for what is measured and how to read it.
 *
 *   npm run bench                     10 s per workload after a 3 s warm-up, 2 rounds
 *   npm run bench -- --quick          3 s after a 1 s warm-up
 *   options: --duration S --warmup S --connections N --rounds N --targets a,b --workloads W1,W2
 *            --profile W2,W4 (workloads to profile; W2) --no-profile --results DIR (bench/results)
 *            --profile-rate N (profile at N requests a second, as the paced runs offer; 0: flat out)
 *            --no-webhooks (skips bench/webhooks.ts, which runs after the workloads: deliveries under
 *            a create load, at a fraction of it and on a backlog, into DIR/webhooks-*.md)
 *            --no-large-tenant (skips bench/large-tenant.ts, which runs last: custom filters and the
 *            pipeline summary on a tenant with 100,000 leads, into DIR/large-tenant.md)
 *            --no-lists (skips bench/lists.ts, which runs after it: page 1 against the deepest page of
 *            a walk over 1,000,000 leads on PostgreSQL and 100,000 on PGlite, into DIR/lists.md)
 *            --no-webhook-filters (skips bench/webhook-filters.ts: deliveries and the feed through
 *            filters against none, into DIR/webhook-filters-*.md)
 *            --no-pipelines (skips bench/pipelines.ts: the migration to pipelines and a stage's
 *            leads moved, on 1,000,000 leads on PostgreSQL and 100,000 on PGlite, into DIR/pipelines.md)
 *            --no-duplicates (skips bench/duplicates.ts: the matching keys' backfill, duplicates
 *            pages, merges and their undo on a tenant of 100,000 leads, into DIR/duplicates.md)
 *            --no-jobs (skips bench/imports.ts and bench/exports.ts, which run last: an import and an
 *            export of 1,000,000 leads on PostgreSQL and 100,000 on PGlite, into DIR/imports-*.md
 *            and DIR/exports.md)
 *            Each of these runs on PostgreSQL (when there is one) and on PGlite.
 *            Every file of the run is added to DIR/latest.md after the workloads' figures.
 *            --load-generator wrk|autocannon (wrk when it is installed)
 *            --paced-rate N (1000; 0: no paced runs) --node PATH (the servers' Node.js; this one)
 *   FUNIL_BENCH_DATABASE_URL=postgres://… (else FUNIL_TEST_DATABASE_URL): the PostgreSQL server; without
 *   it the PostgreSQL targets are skipped, and said so.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DEFAULT_EMBEDDED_SHARED_BUFFERS_MB } from '../src/db/pglite-settings.js';
import { withAdminClient } from '../test/helpers/postgres-admin.js';
import { benchPostgresUrl, CAPACITY_SETTINGS } from './bench-database.js';
import { MINIMAL_SCHEMA } from './reference/queries.js';
import { AutocannonLoad } from './throughput/autocannon-load.js';
import { drainFeed } from './throughput/feed-drain.js';
import { type DatabaseCopy, type Fixture, prepareFixture } from './throughput/fixture.js';
import type { LoadGenerator, LoadJob } from './throughput/load-job.js';
import { type MeasuredTarget, type Measurement, measureWorkload } from './throughput/measure.js';
import { findPgbench, runPgbench } from './throughput/pgbench.js';
import { machine } from './throughput/proc.js';
import { type ProfiledRun, profileMarkdown, summariseProfile } from './throughput/profile.js';
import {
  aggregate,
  key,
  markdown,
  PACED_TARGETS,
  type RoundFigures,
  type RunInfo,
  TARGETS,
  type TargetName,
} from './throughput/report.js';
import {
  freePort,
  npmStartFlags,
  type RunningServer,
  type ServerSpec,
  startServer,
  tail,
} from './throughput/server-process.js';
import { compareWithFunil } from './throughput/sql-check.js';
import { transpileHelpers } from './throughput/transpile.js';
import {
  BATCH_CONNECTIONS,
  FUNIL_ONLY,
  OUTBOX_WORKLOADS,
  PACED_WORKLOADS,
  RUN_ORDER,
  WORKLOAD_IDS,
  WORKLOADS,
  type WorkloadId,
} from './throughput/workloads.js';
import { findWrk, WrkLoad } from './throughput/wrk-load.js';

const ROOT = resolve(import.meta.dirname, '..');
const POOL_SIZE = 10;
/** Funil runs with the Node flags `npm start` gives it (package.json), as in production. */
const START_FLAGS = npmStartFlags(ROOT);
/** The CPU profiler's sampling interval. */
const PROFILE_INTERVAL_US = 500;
const LOGGING =
  'Funil runs at its production default level (`info`: one JSON line per request) with stdout and stderr ' +
  'redirected to a file in the temporary directory (not a terminal, not /dev/null: the writes are real), ' +
  'deleted after each run; the reference and the ceilings log nothing.';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '2' },
    targets: { type: 'string', default: TARGETS.join(',') },
    workloads: { type: 'string', default: WORKLOAD_IDS.join(',') },
    profile: { type: 'string', default: 'W2' },
    'no-profile': { type: 'boolean', default: false },
    'profile-rate': { type: 'string', default: '0' },
    'no-large-tenant': { type: 'boolean', default: false },
    'no-lists': { type: 'boolean', default: false },
    'no-jobs': { type: 'boolean', default: false },
    'no-webhooks': { type: 'boolean', default: false },
    'no-webhook-filters': { type: 'boolean', default: false },
    'no-pipelines': { type: 'boolean', default: false },
    'no-duplicates': { type: 'boolean', default: false },
    'load-generator': { type: 'string' },
    'paced-rate': { type: 'string', default: '1000' },
    node: { type: 'string' },
    results: { type: 'string', default: join(ROOT, 'bench', 'results') },
  },
});
const RESULTS = resolve(options.results);
const settings = {
  durationSec: Number(options.duration ?? (options.quick ? 3 : 10)),
  warmupSec: Number(options.warmup ?? (options.quick ? 1 : 3)),
  connections: Number(options.connections),
  rounds: Number(options.rounds),
  /** The rate offered in the paced runs (requests a second); 0: none. */
  pacedRate: Number(options['paced-rate']),
  /** The rate offered while profiling (requests a second); 0: flat out. */
  profileRate: Number(options['profile-rate']),
};
const selected = options.targets.split(',').map((name) => name.trim()) as TargetName[];
const unknown = selected.filter((name) => !TARGETS.includes(name));
if (unknown.length) throw new Error(`unknown target(s) ${unknown.join(', ')}; known: ${TARGETS.join(', ')}`);
const workloads = RUN_ORDER.filter((id) => options.workloads.split(',').includes(id));
const profiled = WORKLOAD_IDS.filter((id) => options.profile.split(',').includes(id));
const loadGenerator = chooseLoadGenerator(options['load-generator']);

const started = new Date();
/** The Node.js the servers run on (Funil, the reference, the HTTP ceiling): another version's with `--node`. */
const NODE = options.node ?? process.execPath;
const machineAtStart = machine(NODE);
const skipped: RunInfo['skipped'] = [];
const figures = new Map<string, RoundFigures[]>();
/** The paced runs' figures, apart: their CPU per request is not the capacity runs'. */
const pacedFigures = new Map<string, RoundFigures[]>();
const feed: RunInfo['feed'] = [];
const cleanups: (() => Promise<unknown>)[] = [];
const running = new Set<{ stop(): Promise<unknown> }>();
let interrupted = false;
/** Where the reference and the HTTP ceiling, transpiled to plain JavaScript, are. */
let helpers = '';

process.once('SIGINT', () => {
  interrupted = true;
  console.log('\ninterrupted: stopping what runs and cleaning up');
  void shutdown().finally(() => process.exit(130));
});

async function shutdown(): Promise<void> {
  for (const child of running) await child.stop().catch(() => undefined);
  running.clear();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  cleanups.length = 0;
}

function log(message: string): void {
  console.log(`[${((Date.now() - started.getTime()) / 1000).toFixed(0).padStart(4)} s] ${message}`);
}

try {
  await main();
} finally {
  await shutdown();
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist', 'server.js'))) throw new Error('dist/server.js is missing: run `npm run build`');
  log(
    `machine: ${machineAtStart.cores} cores, load average ${machineAtStart.loadAverage.map((v) => v.toFixed(2)).join(' ')}`,
  );
  const sqlCheck = await compareWithFunil();
  if (sqlCheck.length) log(`WARNING: the reference's SQL differs from Funil's for ${sqlCheck.map((d) => d.statement)}`);

  helpers = await transpileHelpers(ROOT);
  const postgresUrl = benchPostgresUrl();
  const pgbench = await findPgbench();
  const targets = selected.filter((target) => {
    const reason = skipReason(target, postgresUrl, pgbench);
    if (reason) skipped.push({ target, reason });
    return !reason;
  });
  for (const skip of skipped) log(`skipped ${skip.target}: ${skip.reason}`);

  log(`load generator: ${loadGenerator.description}`);
  const work = await mkdtemp(join(tmpdir(), 'funil-bench-'));
  cleanups.push(() => rm(work, { recursive: true, force: true }));
  log('seeding the fixture (PostgreSQL template database and PGlite template directory)');
  const fixture = await prepareFixture(postgresUrl);
  cleanups.push(() => fixture.close());
  const bodiesFile = join(work, 'ceiling-bodies.json');
  await writeFile(bodiesFile, JSON.stringify(fixture.bodies));
  const monitor = postgresUrl ? new pg.Client({ connectionString: postgresUrl }) : undefined;
  if (monitor) {
    await monitor.connect();
    cleanups.push(() => monitor.end());
  }
  const backendsOf = (copy: DatabaseCopy) => async () => {
    if (!monitor || !copy.name) return [];
    const result = await monitor.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [copy.name],
    );
    return result.rows.map((row) => row.pid);
  };
  log(`fixture ready; targets ${targets.join(', ')}; workloads ${workloads.join(', ')}`);

  for (let round = 1; round <= settings.rounds && !interrupted; round++) {
    for (const target of targets) {
      if (interrupted) break;
      // The HTTP ceiling has no database: an empty copy that stands for none.
      const copy =
        target === 'http-ceiling'
          ? { location: '', discard: async () => {} }
          : target.endsWith('embedded')
            ? await fixture.copyPglite()
            : await fixture.copyPostgres();
      try {
        if (target === 'reference-minimal') await withAdminClient(copy.location, makeMinimalSchema);
        if (target === 'db-ceiling') {
          for (const workload of workloadsOf(target)) {
            const measured = await runPgbench({
              pgbench: (pgbench as { path: string }).path,
              url: copy.location,
              workload,
              clients: POOL_SIZE,
              threads: Math.max(1, Math.min(POOL_SIZE, machineAtStart.cores)),
              warmupSec: settings.warmupSec,
              durationSec: settings.durationSec,
              tenantId: fixture.tenant.id,
              tokenId: fixture.tenant.tokenId,
              databasePids: backendsOf(copy),
              loadAverage: () => os.loadavg()[0] ?? 0,
            });
            record(target, workload, round, measured);
          }
        } else {
          await runHttpTarget(target, round, copy, fixture, bodiesFile, work, backendsOf(copy));
        }
      } finally {
        await copy.discard();
      }
    }
  }

  let profileNote: string | null = null;
  if (!interrupted && !options['no-profile'] && profiled.length && targets.includes('funil-postgres')) {
    profileNote = await profile(fixture, work, backendsOf, targets.includes('reference'));
  } else if (!options['no-profile']) {
    skipped.push({ target: 'profile', reason: 'needs the funil-postgres target (PostgreSQL)' });
  }

  const rows = aggregate(figures);
  const finished = new Date();
  const stall = rows
    .filter((row) => row.workload === 'W2' && row.healthP99Ms !== null)
    .map((row) => ({
      target: row.target,
      workload: row.workload,
      samples: row.rounds.reduce((sum, r) => sum + (r.health?.samples ?? 0), 0),
      healthP50Ms: row.rounds.reduce((sum, r) => sum + (r.health?.p50Ms ?? 0), 0) / row.rounds.length,
      healthP99Ms: row.healthP99Ms as number,
      healthMaxMs: row.healthMaxMs as number,
      loopDelayP99Ms: row.loopDelayP99Ms,
      loopDelayMaxMs: row.loopDelayMaxMs,
    }));
  const info: RunInfo = {
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationSec: (finished.getTime() - started.getTime()) / 1000,
    commit: commit(),
    machineAtStart,
    loadAverageAtEnd: os.loadavg() as [number, number, number],
    settings: {
      ...settings,
      poolSize: POOL_SIZE,
      pgbenchClients: POOL_SIZE,
      leads: fixture.data.leadIds.length,
      customers: fixture.data.customerIds.length,
    },
    postgresVersion: fixture.postgresVersion ?? null,
    loadGenerator: loadGenerator.description,
    logging: LOGGING,
    skipped,
    sqlCheck,
    stall,
    profile: profileNote,
    feed,
    paced: { ratePerSec: settings.pacedRate, rows: aggregate(pacedFigures) },
  };
  await mkdir(RESULTS, { recursive: true });
  await writeFile(join(RESULTS, 'latest.json'), `${JSON.stringify(rows, null, 2)}\n`);
  await writeFile(join(RESULTS, 'latest.run.json'), `${JSON.stringify(info, null, 2)}\n`);
  const report = markdown(rows, info);
  await writeFile(join(RESULTS, 'latest.md'), report);
  console.log(`\n${report}`);
  log(`wrote ${relative(ROOT, join(RESULTS, 'latest.md'))}, latest.json and latest.run.json`);
  // Each in a process of its own, with the machine to itself: every server of the run has stopped.
  // Each writes its own file; latest.md then holds them all after the run's own figures.
  const gathered: string[] = [];
  // One that fails is named in latest.md and fails the run, and the others still run. One that
  // wrote its file before failing (a target it missed: bench/lists.ts) still has its figures shown.
  const benchFailures: string[] = [];
  const runAlone = (file: string, script: string, ...args: string[]) => {
    const started = Date.now();
    try {
      execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', script), '--results', RESULTS, ...args], {
        cwd: ROOT,
        stdio: 'inherit',
      });
    } catch {
      const bench = `bench/${[script, ...args].join(' ')}`;
      const wrote = (statSync(join(RESULTS, file), { throwIfNoEntry: false })?.mtimeMs ?? 0) >= started;
      benchFailures.push(
        wrote
          ? `**Failed in this run**: \`${bench}\` ended with an error after writing its figures (below): a target it missed, or a part that failed (the run's log says which).\n`
          : `**Failed in this run** (no figures): \`${bench}\`.\n`,
      );
      log(`FAILED: ${bench} (its output is above)`);
      process.exitCode = 1;
      if (!wrote) return;
    }
    if (!gathered.includes(file)) gathered.push(file);
  };
  /** A bench whose file holds a section per backend: PostgreSQL's (when there is one), then PGlite's. */
  const bothBackends = (file: string, script: string) => {
    if (benchPostgresUrl()) runAlone(file, script, '--backend', 'postgres');
    runAlone(file, script, '--backend', 'embedded');
  };
  if (!interrupted && !options['no-webhooks']) {
    log('SPEC §15: webhook deliveries under a create load, at a fraction of it, and on a backlog (bench/webhooks.ts)');
    if (benchPostgresUrl()) runAlone('webhooks-postgres.md', 'webhooks.ts', '--backend', 'postgres');
    runAlone('webhooks-embedded.md', 'webhooks.ts', '--backend', 'embedded');
  }
  if (!interrupted && !options['no-webhook-filters']) {
    log('SPEC §22: deliveries and the feed through filters, against none (bench/webhook-filters.ts)');
    if (benchPostgresUrl()) runAlone('webhook-filters-postgres.md', 'webhook-filters.ts', '--backend', 'postgres');
    runAlone('webhook-filters-pglite.md', 'webhook-filters.ts', '--backend', 'pglite');
  }
  if (!interrupted && !options['no-large-tenant']) {
    log('a tenant with 100,000 leads: custom filters and the pipeline summary (bench/large-tenant.ts)');
    runAlone('large-tenant.md', 'large-tenant.ts');
  }
  if (!interrupted && !options['no-lists']) {
    log('keyset paging: page 1 against the deepest page of a walk over 1,000,000 leads (bench/lists.ts)');
    runAlone('lists.md', 'lists.ts');
  }
  if (!interrupted && !options['no-pipelines']) {
    log("SPEC §20: the migration to pipelines and a stage's leads moved, on a large tenant (bench/pipelines.ts)");
    bothBackends('pipelines.md', 'pipelines.ts');
  }
  if (!interrupted && !options['no-duplicates']) {
    log('SPEC §21: the backfill of matching keys, duplicates pages, merges and undo (bench/duplicates.ts)');
    bothBackends('duplicates.md', 'duplicates.ts');
  }
  if (!interrupted && !options['no-jobs']) {
    log(
      'SPEC §23: an import of 1,000,000 leads (100,000 embedded) against single POSTs, and an export (bench/imports.ts, bench/exports.ts)',
    );
    if (benchPostgresUrl()) runAlone('imports-postgres.md', 'imports.ts', '--backend', 'postgres');
    runAlone('imports-pglite.md', 'imports.ts', '--backend', 'embedded');
    bothBackends('exports.md', 'exports.ts');
  }
  if (gathered.length > 0 || benchFailures.length > 0) {
    const parts = await Promise.all(gathered.map((file) => readFile(join(RESULTS, file), 'utf8')));
    const demoted = parts.map((part) => part.replace(/^#/gm, '##'));
    await writeFile(
      join(RESULTS, 'latest.md'),
      [report, '# The other benches of this run', '', ...benchFailures, ...demoted].join('\n'),
    );
    log(`latest.md: ${gathered.join(', ')} added`);
  }
  const failures = rows.filter((row) => row.errors > 0);
  if (failures.length) {
    log(`ERRORS in ${failures.map((row) => `${row.target} ${row.workload}`).join(', ')}: the figures are not valid`);
    process.exitCode = 1;
  }
}

/** The minimal schema on a copy, its tables vacuumed as the template's were (VACUUM runs on its own). */
async function makeMinimalSchema(client: pg.Client): Promise<void> {
  await client.query(MINIMAL_SCHEMA);
  await client.query('vacuum analyze minimal.leads, minimal.customers');
}

/**
 * The selected workloads a target serves: SPEC §13's and §19's are Funil's alone, and the reference
 * without events is there for the writes that add one.
 */
function workloadsOf(target: TargetName): readonly WorkloadId[] {
  if (target.startsWith('funil')) return workloads;
  if (target === 'reference-no-events') return workloads.filter((workload) => OUTBOX_WORKLOADS.includes(workload));
  return workloads.filter((workload) => !FUNIL_ONLY.has(workload));
}

/**
 * Issue 21's second goal compares Node's CPU per request with the thin server's on a create, a
 * status change and a get by id. Saturated, a server answering 12,000 requests a second has its
 * wake-ups and system calls batched as one answering 3,000 has not; offered one rate, each pays
 * its own way per request.
 */
function pacedWorkloadsOf(target: TargetName): readonly WorkloadId[] {
  if (!settings.pacedRate || !PACED_TARGETS.has(target)) return [];
  return workloads.filter((workload) => PACED_WORKLOADS.includes(workload));
}

function skipReason(
  target: TargetName,
  postgresUrl: string | undefined,
  pgbench: Awaited<ReturnType<typeof findPgbench>>,
): string | undefined {
  const needsPostgres = !target.endsWith('embedded') && target !== 'http-ceiling';
  if (needsPostgres && !postgresUrl) {
    return 'no PostgreSQL: set FUNIL_BENCH_DATABASE_URL=postgres://user@host:port/db (a server where the user may create databases)';
  }
  if (target === 'db-ceiling' && 'missing' in pgbench) return pgbench.missing;
  return undefined;
}

function serverSpec(target: TargetName, copy: DatabaseCopy, fixture: Fixture, bodiesFile: string, logFile: string) {
  const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production' };
  const storage = target.endsWith('embedded');
  const spec: ServerSpec = { label: target, args: [], node: NODE, env: base, logFile, cwd: ROOT };
  switch (target) {
    case 'funil-postgres':
    case 'funil-embedded':
      spec.args = [...START_FLAGS, 'dist/server.js'];
      spec.env = {
        ...base,
        ...(storage ? { FUNIL_DATA_DIR: copy.location } : { DATABASE_URL: copy.location }),
        FUNIL_DB_POOL_SIZE: String(POOL_SIZE),
        ...CAPACITY_SETTINGS,
      };
      break;
    case 'reference':
    case 'reference-minimal':
    case 'reference-no-events':
    case 'reference-embedded':
      spec.args = [join(helpers, 'server.js')];
      spec.env = {
        ...base,
        ...(storage
          ? {
              REFERENCE_DATA_DIR: copy.location,
              REFERENCE_SHARED_BUFFERS_MB: String(DEFAULT_EMBEDDED_SHARED_BUFFERS_MB),
            }
          : { REFERENCE_DATABASE_URL: copy.location }),
        REFERENCE_POOL_SIZE: String(POOL_SIZE),
        REFERENCE_TENANT_ID: fixture.tenant.id,
        REFERENCE_TOKEN_ID: fixture.tenant.tokenId,
        ...(target === 'reference-minimal' && { REFERENCE_SCHEMA: 'minimal' }),
        ...(target === 'reference-no-events' && { REFERENCE_EVENTS: 'off' }),
      };
      break;
    case 'http-ceiling':
      spec.args = [join(helpers, 'http-server.js')];
      spec.env = { ...base, CEILING_BODIES: bodiesFile };
      break;
    case 'db-ceiling':
      throw new Error('pgbench is not an HTTP server');
  }
  return spec;
}

async function runHttpTarget(
  target: TargetName,
  round: number,
  copy: DatabaseCopy,
  fixture: Fixture,
  bodiesFile: string,
  work: string,
  databasePids: () => Promise<number[]>,
): Promise<void> {
  const logFile = join(work, `${target}-${round}.log`);
  const server = await startTracked(serverSpec(target, copy, fixture, bodiesFile, logFile));
  const load = loadGenerator.start(work);
  running.add(load);
  try {
    const measured: MeasuredTarget = {
      server,
      ...(copy.name ? { databasePids } : {}),
      ...(target.startsWith('funil') ? { metricsUrl: `${server.url}/metrics` } : {}),
    };
    await warmUp(server, load, fixture);
    for (const workload of workloadsOf(target)) {
      if (interrupted) break;
      const result = await measureWorkload(measured, load, job(server, fixture, workload), () => os.loadavg()[0] ?? 0);
      record(target, workload, round, result);
    }
    for (const workload of pacedWorkloadsOf(target)) {
      if (interrupted) break;
      const paced = { ...job(server, fixture, workload), ratePerSec: settings.pacedRate };
      const result = await measureWorkload(measured, load, paced, () => os.loadavg()[0] ?? 0, false);
      record(target, workload, round, result, pacedFigures);
    }
    if (target.startsWith('funil') && !interrupted) {
      const drained = await drainFeed(server.url, fixture.tenant.token);
      feed.push({ target, round, ...drained });
      log(`${target} round ${round}: drained ${drained.events} events at ${Math.round(drained.eventsPerSec)}/s`);
    }
  } finally {
    await load.stop();
    running.delete(load);
    await stopTracked(server);
  }
}

function job(server: RunningServer, fixture: Fixture, workload: WorkloadId, warmupSec = settings.warmupSec): LoadJob {
  return {
    url: server.url,
    token: fixture.tenant.token,
    workload,
    data: fixture.data,
    connections: workload === 'W6' ? Math.min(settings.connections, BATCH_CONNECTIONS) : settings.connections,
    warmupSec,
    durationSec: settings.durationSec,
  };
}

/**
 * A freshly started process runs the mixed workload once, unmeasured, so that every route has been
 * through V8's optimising compiler before the first workload's own warm-up.
 */
async function warmUp(server: RunningServer, load: LoadGenerator, fixture: Fixture): Promise<void> {
  await load.run({ ...job(server, fixture, 'W5', 0), durationSec: settings.warmupSec }, () => {});
}

async function startTracked(spec: ServerSpec, extraArgs: string[] = []): Promise<RunningServer> {
  const server = await startServer({ ...spec, args: [...extraArgs, ...spec.args] }, await freePort());
  running.add(server);
  return server;
}

async function stopTracked(server: RunningServer): Promise<void> {
  const how = await server.stop();
  running.delete(server);
  if (how !== 'exit 0') log(`${server.label} (PID ${server.pid}) ended with ${how}:\n${tail(server.logFile)}`);
}

function record(
  target: TargetName,
  workload: WorkloadId,
  round: number,
  measured: RoundFigures | Omit<RoundFigures, 'round'>,
  into = figures,
) {
  const entry: RoundFigures = { ...measured, round };
  const list = into.get(key(target, workload)) ?? [];
  list.push(entry);
  into.set(key(target, workload), list);
  const bad = entry.errors + entry.non2xx;
  const paced = into === pacedFigures ? ` paced at ${settings.pacedRate}/s` : '';
  log(
    `round ${round} ${target.padEnd(18)} ${workload}${paced}: ${Math.round(entry.rps).toString().padStart(6)} req/s, ` +
      `p50 ${entry.p50Ms.toFixed(2)} ms, p99 ${entry.p99Ms.toFixed(2)} ms, errors ${bad}` +
      (entry.cpuMsPerRequest !== null ? `, cpu ${entry.cpuMsPerRequest.toFixed(3)} ms/req` : '') +
      (entry.dbCpuMsPerRequest !== null ? `, db cpu ${entry.dbCpuMsPerRequest.toFixed(3)} ms/req` : '') +
      (entry.peakRssMb !== null ? `, rss ${entry.peakRssMb.toFixed(0)} MB` : '') +
      (entry.health ? `, /health p99 ${entry.health.p99Ms.toFixed(1)} ms` : '') +
      (bad ? ` ${JSON.stringify(entry.statusCodes)}` : ''),
  );
}

/**
 * funil-postgres and then the reference under each profiled workload (W2 unless --profile says
 * otherwise) with --cpu-prof, each on a fresh copy of the data; summarised side by side in
 * bench/results/profile-top.md.
 */
async function profile(
  fixture: Fixture,
  work: string,
  backendsOf: (copy: DatabaseCopy) => () => Promise<number[]>,
  withReference: boolean,
): Promise<string> {
  const documents: string[] = [];
  for (const workload of profiled) {
    const funil = await profileTarget('funil-postgres', workload, fixture, work, backendsOf);
    const reference = withReference ? await profileTarget('reference', workload, fixture, work, backendsOf) : undefined;
    const context =
      `${workload} (${WORKLOADS[workload]}), ${settings.connections} connections` +
      `${settings.profileRate ? ` offered ${settings.profileRate} requests a second in all` : ''}, ${settings.warmupSec} s warm-up then ` +
      `${settings.durationSec} s measured, \`node --cpu-prof --cpu-prof-interval ${PROFILE_INTERVAL_US}\`; only the ` +
      `measured span counts. Run ${started.toISOString()}, commit ${commit()}, load average at start ` +
      `${machineAtStart.loadAverage.map((v) => v.toFixed(2)).join(' / ')} on ${machineAtStart.cores} cores.`;
    documents.push(profileMarkdown(workload, funil, reference, context));
  }
  const file = join(RESULTS, 'profile-top.md');
  await writeFile(file, documents.join('\n'));
  return `${relative(ROOT, file)} (generated each run); a reading of it in bench/results/profile-notes.md`;
}

async function profileTarget(
  target: 'funil-postgres' | 'reference',
  workload: WorkloadId,
  fixture: Fixture,
  work: string,
  backendsOf: (copy: DatabaseCopy) => () => Promise<number[]>,
): Promise<ProfiledRun> {
  const copy = await fixture.copyPostgres();
  try {
    const dir = join(work, 'profiles');
    const name = `${target}-${workload}.cpuprofile`;
    const spec = serverSpec(target, copy, fixture, '', join(work, `${target}-profile.log`));
    const profiler = ['--cpu-prof', '--cpu-prof-interval', String(PROFILE_INTERVAL_US), '--cpu-prof-dir', dir];
    const server = await startTracked(spec, [...profiler, '--cpu-prof-name', name]);
    const load = loadGenerator.start(work);
    running.add(load);
    let measured: Measurement;
    try {
      await warmUp(server, load, fixture);
      const offered = settings.profileRate ? { ratePerSec: settings.profileRate } : {};
      measured = await measureWorkload(
        { server, databasePids: backendsOf(copy) },
        load,
        { ...job(server, fixture, workload), ...offered },
        () => os.loadavg()[0] ?? 0,
      );
    } finally {
      await load.stop();
      running.delete(load);
      await stopTracked(server);
    }
    log(`profiled ${target} ${workload}: ${Math.round(measured.rps)} req/s under --cpu-prof`);
    const saved = join(RESULTS, 'profiles', name);
    await mkdir(join(RESULTS, 'profiles'), { recursive: true });
    await copyFile(join(dir, name), saved);
    return {
      target,
      summary: await summariseProfile(saved, measured.windowUs ?? undefined),
      requests: measured.responses + (measured.health?.samples ?? 0),
      rps: measured.rps,
      processCpuMsPerRequest: measured.cpuMsPerRequest,
      file: relative(ROOT, saved),
    };
  } finally {
    await copy.discard();
  }
}

/** wrk where it is installed (it leaves the server the cores), else autocannon; --load-generator chooses. */
function chooseLoadGenerator(asked: string | undefined): {
  description: string;
  start(work: string): LoadGenerator;
} {
  if (asked !== undefined && asked !== 'wrk' && asked !== 'autocannon') {
    throw new Error(`--load-generator ${asked}: wrk or autocannon`);
  }
  const autocannon = (why: string) => ({ description: `autocannon${why}`, start: () => new AutocannonLoad(ROOT) });
  if (asked === 'autocannon') return autocannon(', as asked');
  const wrk = findWrk();
  if ('path' in wrk) return { description: `wrk (${wrk.path}), one thread`, start: (work) => new WrkLoad(work) };
  if (asked === 'wrk') throw new Error(`--load-generator wrk: ${wrk.missing}`);
  return autocannon(`; ${wrk.missing}`);
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head} with uncommitted changes in src/` : head;
  } catch {
    return 'unknown';
  }
}
