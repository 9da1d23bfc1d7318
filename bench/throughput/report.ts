/** Aggregates the rounds into one row per target × workload, with the ratios, and renders them. */
import { FEED_PAGE, type FeedDrain } from './feed-drain.js';
import type { Measurement } from './measure.js';
import type { Machine } from './proc.js';
import {
  BATCH_CONNECTIONS,
  BATCH_SIZE,
  MCP_WORKLOADS,
  OUTBOX_WORKLOADS,
  WORKLOAD_IDS,
  WORKLOADS,
  type WorkloadId,
} from './workloads.js';

export const TARGETS = [
  'funil-postgres',
  'funil-embedded',
  'reference',
  'reference-minimal',
  'reference-no-events',
  'reference-embedded',
  'http-ceiling',
  'db-ceiling',
] as const;
export type TargetName = (typeof TARGETS)[number];

/** Which reference each Funil target is compared with: the same storage, the thinnest server. */
export const REFERENCE_OF: Partial<Record<TargetName, TargetName>> = {
  'funil-postgres': 'reference',
  'funil-embedded': 'reference-embedded',
};
/** Who runs the paced workloads: Funil on PostgreSQL, the thin server on its schema and on the minimal one. */
export const PACED_TARGETS: ReadonlySet<TargetName> = new Set(['funil-postgres', 'reference', 'reference-minimal']);
/** Targets on PostgreSQL running Funil's statements on Funil's schema, whose database ceiling is pgbench's. */
const ON_POSTGRES = new Set<TargetName>(['funil-postgres', 'reference']);

export interface RoundFigures extends Measurement {
  round: number;
}

export interface ResultRow {
  target: TargetName;
  workload: WorkloadId;
  /** Mean of the rounds. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Connection errors, timeouts and non-2xx answers, all rounds; failed transactions for pgbench. */
  errors: number;
  /** Highest of the rounds. */
  peakRssMb: number | null;
  cpuMsPerRequest: number | null;
  dbCpuMsPerRequest: number | null;
  loadgenCpuMsPerRequest: number | null;
  logBytesPerRequest: number | null;
  bytesPerResponse: number | null;
  /** GET /health every 10 ms during the run: p99 (mean of the rounds) and the worst single one. */
  healthP99Ms: number | null;
  healthMaxMs: number | null;
  /** The server's own event-loop delay (monitorEventLoopDelay; Funil only): p99 (mean of the rounds) and the worst. */
  loopDelayP99Ms: number | null;
  loopDelayMaxMs: number | null;
  /** rps ÷ the reference's rps on the same storage (Funil targets only). */
  ratioToReference: number | null;
  referenceTarget: TargetName | null;
  /** CPU ms per request ÷ the reference's. */
  cpuRatioToReference: number | null;
  ratioToHttpCeiling: number | null;
  /** rps ÷ pgbench's tps for the same statements (targets on PostgreSQL). */
  ratioToDbCeiling: number | null;
  rounds: RoundFigures[];
}

export interface RunInfo {
  startedAt: string;
  finishedAt: string;
  durationSec: number;
  commit: string;
  machineAtStart: Machine;
  loadAverageAtEnd: [number, number, number];
  settings: {
    connections: number;
    durationSec: number;
    warmupSec: number;
    rounds: number;
    poolSize: number;
    pgbenchClients: number;
    leads: number;
    customers: number;
  };
  postgresVersion: string | null;
  /** Which load generator made the load, and why that one. */
  loadGenerator: string;
  logging: string;
  skipped: { target: string; reason: string }[];
  sqlCheck: { statement: string; funil: string }[];
  stall: {
    target: string;
    workload: string;
    samples: number;
    healthP50Ms: number;
    healthP99Ms: number;
    healthMaxMs: number;
    loopDelayP99Ms: number | null;
    loopDelayMaxMs: number | null;
  }[];
  profile: string | null;
  /** The change feed drained after the workloads, per Funil target and round. */
  feed: (FeedDrain & { target: string; round: number })[];
  /** The workloads run again at one offered rate (`--paced-rate`), on PACED_TARGETS. */
  paced: { ratePerSec: number; rows: ResultRow[] };
}

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN);
function meanOrNull(values: (number | null)[]): number | null {
  const present = values.filter((value): value is number => value !== null && Number.isFinite(value));
  return present.length ? mean(present) : null;
}

export function aggregate(figures: Map<string, RoundFigures[]>): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const target of TARGETS) {
    for (const workload of WORKLOAD_IDS) {
      const rounds = figures.get(key(target, workload));
      if (!rounds?.length) continue;
      const healths = rounds.map((round) => round.health).filter((health) => health !== null);
      const loopDelays = rounds.map((round) => round.loopDelay).filter((delay) => delay !== null);
      const rssValues = rounds.map((round) => round.peakRssMb).filter((value) => value !== null);
      rows.push({
        target,
        workload,
        rps: mean(rounds.map((round) => round.rps)),
        p50Ms: mean(rounds.map((round) => round.p50Ms)),
        p99Ms: mean(rounds.map((round) => round.p99Ms)),
        errors: rounds.reduce((sum, round) => sum + round.errors + round.non2xx, 0),
        peakRssMb: rssValues.length ? Math.max(...rssValues) : null,
        cpuMsPerRequest: meanOrNull(rounds.map((round) => round.cpuMsPerRequest)),
        dbCpuMsPerRequest: meanOrNull(rounds.map((round) => round.dbCpuMsPerRequest)),
        loadgenCpuMsPerRequest: meanOrNull(rounds.map((round) => round.loadgenCpuMsPerRequest)),
        logBytesPerRequest: meanOrNull(rounds.map((round) => round.logBytesPerRequest)),
        bytesPerResponse: meanOrNull(rounds.map((round) => round.bytesPerResponse || null)),
        healthP99Ms: healths.length ? mean(healths.map((health) => health.p99Ms)) : null,
        healthMaxMs: healths.length ? Math.max(...healths.map((health) => health.maxMs)) : null,
        loopDelayP99Ms: loopDelays.length ? mean(loopDelays.map((delay) => delay.p99Ms)) : null,
        loopDelayMaxMs: loopDelays.length ? Math.max(...loopDelays.map((delay) => delay.maxMs)) : null,
        ratioToReference: null,
        referenceTarget: null,
        cpuRatioToReference: null,
        ratioToHttpCeiling: null,
        ratioToDbCeiling: null,
        rounds,
      });
    }
  }
  const find = (target: TargetName, workload: WorkloadId) =>
    rows.find((row) => row.target === target && row.workload === workload);
  for (const row of rows) {
    const referenceTarget = REFERENCE_OF[row.target];
    const reference = referenceTarget ? find(referenceTarget, row.workload) : undefined;
    if (reference && referenceTarget) {
      row.referenceTarget = referenceTarget;
      row.ratioToReference = row.rps / reference.rps;
      if (row.cpuMsPerRequest !== null && reference.cpuMsPerRequest)
        row.cpuRatioToReference = row.cpuMsPerRequest / reference.cpuMsPerRequest;
    }
    const httpCeiling = find('http-ceiling', row.workload);
    if (httpCeiling && !row.target.endsWith('ceiling')) row.ratioToHttpCeiling = row.rps / httpCeiling.rps;
    const dbCeiling = find('db-ceiling', row.workload);
    if (dbCeiling && ON_POSTGRES.has(row.target)) row.ratioToDbCeiling = row.rps / dbCeiling.rps;
  }
  return rows;
}

export function key(target: TargetName, workload: WorkloadId): string {
  return `${target} ${workload}`;
}

const fixed = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
const ratio = (value: number | null) => (value === null ? '–' : `${value.toFixed(2)}×`);
const count = (value: number) => Math.round(value).toLocaleString('en');

export function markdown(rows: ResultRow[], info: RunInfo): string {
  const { machineAtStart: m, settings: s } = info;
  const lines: string[] = [
    '# Funil throughput benchmark (`npm run bench`)',
    '',
    `Run ${info.startedAt} → ${info.finishedAt} (${Math.round(info.durationSec)} s), commit ${info.commit}.`,
    '',
    `Machine: **${m.cores} cores** (${m.cpuModel}), ${m.memoryGb} GB, ${m.platform}, Node ${m.node} (the servers')` +
      (info.postgresVersion ? `, PostgreSQL ${info.postgresVersion}` : '') +
      '.',
    `Load average at start **${m.loadAverage.map((v) => v.toFixed(2)).join(' / ')}** (1 / 5 / 15 min), at end ${info.loadAverageAtEnd
      .map((v) => v.toFixed(2))
      .join(' / ')}. The load generator, the server and PostgreSQL share these cores.`,
    '',
    `Settings: ${s.connections} connections, ${s.warmupSec} s warm-up then ${s.durationSec} s measured, per workload; ` +
      `${s.rounds} rounds, the targets alternating (A B … A B …), each started fresh on a fresh copy of the data ` +
      `(one tenant, ${count(s.leads)} leads, ${count(s.customers)} customers). Pool: ${s.poolSize} connections (Funil's default) ` +
      `for Funil and the reference; pgbench: ${s.pgbenchClients} clients. Load generator: ${info.loadGenerator}. ` +
      `Logging: ${info.logging}`,
    '',
  ];
  if (info.skipped.length) {
    lines.push('**Skipped:**', '', ...info.skipped.map((skip) => `- ${skip.target}: ${skip.reason}`), '');
  }
  if (info.sqlCheck.length) {
    lines.push(
      '**Warning: the reference no longer sends Funil’s SQL** (update bench/reference/queries.ts):',
      '',
      ...info.sqlCheck.map((diff) => `- ${diff.statement}: Funil sends \`${diff.funil}\``),
      '',
    );
  } else {
    lines.push(
      'The reference sends exactly the SQL Funil’s repositories compile (checked at the start of the run), but for ' +
        'the select list of W2: there Funil reads the timestamps as PostgreSQL’s text (`created_at::text`), and the ' +
        'reference selects the timestamp columns, which node-postgres turns into Dates.',
      '',
    );
  }

  lines.push(
    '## Funil ÷ reference (same storage), per workload',
    '',
    'Throughput ratio (1.00× = as fast as the thinnest server on the same SQL), CPU per request ratio, and p99.',
    '',
    '| workload | PostgreSQL req/s | × ref | CPU × ref | p99 Funil / ref ms | embedded req/s | × ref | CPU × ref | p99 Funil / ref ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const find = (target: TargetName, workload: WorkloadId) =>
    rows.find((row) => row.target === target && row.workload === workload);
  for (const workload of WORKLOAD_IDS) {
    const cells = [`${workload} ${WORKLOADS[workload]}`];
    for (const target of ['funil-postgres', 'funil-embedded'] as const) {
      const row = find(target, workload);
      const reference = row?.referenceTarget ? find(row.referenceTarget, workload) : undefined;
      cells.push(
        row ? count(row.rps) : '–',
        row ? ratio(row.ratioToReference) : '–',
        row ? ratio(row.cpuRatioToReference) : '–',
        row ? `${fixed(row.p99Ms)} / ${fixed(reference?.p99Ms)}` : '–',
      );
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }

  if (rows.some((row) => row.target === 'reference-minimal')) lines.push('', ...schemaCostSection(rows));
  if (info.paced.rows.length) lines.push('', ...pacedSection(info.paced));
  if (rows.some((row) => row.target === 'reference-no-events')) lines.push('', ...outboxSection(rows));
  lines.push('', ...writePathSection(rows));
  if (rows.some((row) => MCP_WORKLOADS.has(row.workload))) lines.push('', ...mcpSection(rows));
  if (info.feed.length) lines.push('', ...feedSection(info.feed));

  lines.push(
    '',
    '## Every target',
    '',
    'req/s is the mean of the rounds (each round in brackets); p50/p99 are means of the rounds; errors counts ' +
      'connection errors, timeouts and non-2xx answers over all rounds (pgbench: failed transactions). CPU ms/req is the ' +
      'server process (user + system) ÷ requests served; DB CPU ms/req is the PostgreSQL backends serving the target ' +
      '(for embedded targets the database runs inside the server process and is in its CPU). /health p99: a GET /health ' +
      'every 10 ms on a connection of its own during the run.',
    '',
    '| W | target | req/s (rounds) | p50 ms | p99 ms | errors | peak RSS MB | CPU ms/req | DB CPU ms/req | /health p99 ms | × ref | × HTTP ceiling | × DB ceiling |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const workload of WORKLOAD_IDS) {
    for (const row of rows.filter((candidate) => candidate.workload === workload)) {
      lines.push(
        `| ${workload} | ${row.target} | ${count(row.rps)} (${row.rounds.map((round) => count(round.rps)).join(' / ')}) | ` +
          `${fixed(row.p50Ms, 2)} | ${fixed(row.p99Ms, 2)} | ${row.errors} | ${fixed(row.peakRssMb, 0)} | ` +
          `${fixed(row.cpuMsPerRequest, 3)} | ${fixed(row.dbCpuMsPerRequest, 3)} | ${fixed(row.healthP99Ms, 1)} | ` +
          `${ratio(row.ratioToReference)} | ${ratio(row.ratioToHttpCeiling)} | ${ratio(row.ratioToDbCeiling)} |`,
      );
    }
  }

  lines.push(
    '',
    '## Event-loop stalls (GET /health every 10 ms, kept-alive, during W2)',
    '',
    'How long a trivial request waits behind the work in the server’s one thread. In embedded mode each PGlite ' +
      'query runs synchronously on that thread, so this is the stall figure for embedded mode.',
    '',
    'The HTTP ceiling’s figures are the machine’s own share: a process that is not scheduled answers late too. ' +
      'Few samples (a slow answer delays the next probe) make p99 close to the worst one.',
    '',
    'For Funil, the last two columns are the event loop’s own delay over the same run, as ' +
      '`perf_hooks.monitorEventLoopDelay` measures it inside the server (prom-client’s collector, read through ' +
      '/metrics at the start and the end of the run; 10 ms resolution).',
    '',
    '| target | workload | probes | /health p50 ms | p99 ms | max ms | loop delay p99 ms | loop delay max ms |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...info.stall.map(
      (stall) =>
        `| ${stall.target} | ${stall.workload} | ${stall.samples} | ${fixed(stall.healthP50Ms, 2)} | ${fixed(stall.healthP99Ms, 1)} | ${fixed(stall.healthMaxMs, 1)} | ${fixed(stall.loopDelayP99Ms, 1)} | ${fixed(stall.loopDelayMaxMs, 1)} |`,
    ),
    '',
    '## Load generator and wire',
    '',
    '| W | target | load generator CPU ms/req | bytes per response | log bytes per request |',
    '|---|---|---:|---:|---:|',
  );
  for (const row of rows.filter((candidate) => candidate.loadgenCpuMsPerRequest !== null)) {
    lines.push(
      `| ${row.workload} | ${row.target} | ${fixed(row.loadgenCpuMsPerRequest, 3)} | ${fixed(row.bytesPerResponse, 0)} | ${fixed(row.logBytesPerRequest, 0)} |`,
    );
  }
  if (info.profile) lines.push('', `CPU profile of funil-postgres under W2: ${info.profile}`);
  lines.push('');
  return lines.join('\n');
}

/**
 * SPEC §13's figures, each against Funil's single create (W1) on the same target: leads stored per
 * second through batches of BATCH_SIZE (SPEC asks ≥ 10×), and what an upsert costs. Ratios are
 * per round (one process, one copy of the data), so their spread is the noise between rounds.
 */
function writePathSection(rows: ResultRow[]): string[] {
  const lines = [
    '## Batches and upserts (SPEC §13), against Funil’s own single creates (W1)',
    '',
    `Leads stored per second: W1 req/s, and W6 req/s × ${BATCH_SIZE} (W6 on ${BATCH_CONNECTIONS} connections, the ` +
      '"lower concurrency" at which SPEC §10 promises batches only 2xx). W7 is an upsert by e-mail, half of them creating ' +
      'a lead and half updating the one the previous request created. Ratios are per round (in brackets), each from ' +
      'one process on one copy of the data; CPU is the server process per lead.',
    '',
    '| target | W1 leads/s | W6 leads/s | W6 ÷ W1 | CPU ms/lead W1 / W6 | W7 upserts/s | W7 ÷ W1 | p99 ms W1 / W6 / W7 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const target of FUNIL_TARGETS) {
    const [single, batch, upsert] = (['W1', 'W6', 'W7'] as const).map((workload) => findRow(rows, target, workload));
    if (!single || (!batch && !upsert)) continue;
    const cpuPerLead = batch?.cpuMsPerRequest != null ? batch.cpuMsPerRequest / BATCH_SIZE : null;
    lines.push(
      `| ${target} | ${roundsCell(single, 1)} | ${roundsCell(batch, BATCH_SIZE)} | ${ratioCell(single, batch, BATCH_SIZE)} | ` +
        `${fixed(single.cpuMsPerRequest, 3)} / ${fixed(cpuPerLead, 3)} | ${roundsCell(upsert, 1)} | ${ratioCell(single, upsert, 1)} | ` +
        `${fixed(single.p99Ms)} / ${fixed(batch?.p99Ms)} / ${fixed(upsert?.p99Ms)} |`,
    );
  }
  return lines;
}

/**
 * SPEC §19's figure: what the MCP envelope (JSON-RPC, the SDK's server and transport, the tool's
 * result twice: structured and as text) costs over the same request through REST, per round.
 */
function mcpSection(rows: ResultRow[]): string[] {
  const lines = [
    '## MCP (SPEC §19), against the same requests over REST',
    '',
    'W8 is W2’s page (100 leads, newest first) through `tools/call search_leads`; W9 is W1’s create through ' +
      '`tools/call create_lead`. Ratios are per round (in brackets); a tool result with `isError` counts as an error.',
    '',
    '| target | W2 req/s | W8 req/s | W8 ÷ W2 | CPU ms/req W2 / W8 | W1 req/s | W9 req/s | W9 ÷ W1 | CPU ms/req W1 / W9 | p99 ms W2 / W8 / W1 / W9 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const target of FUNIL_TARGETS) {
    const [list, search, create, mcpCreate] = (['W2', 'W8', 'W1', 'W9'] as const).map((workload) =>
      findRow(rows, target, workload),
    );
    if (!search && !mcpCreate) continue;
    lines.push(
      `| ${target} | ${roundsCell(list, 1)} | ${roundsCell(search, 1)} | ${ratioCell(list, search, 1)} | ` +
        `${fixed(list?.cpuMsPerRequest, 3)} / ${fixed(search?.cpuMsPerRequest, 3)} | ${roundsCell(create, 1)} | ` +
        `${roundsCell(mcpCreate, 1)} | ${ratioCell(create, mcpCreate, 1)} | ` +
        `${fixed(create?.cpuMsPerRequest, 3)} / ${fixed(mcpCreate?.cpuMsPerRequest, 3)} | ` +
        `${fixed(list?.p99Ms)} / ${fixed(search?.p99Ms)} / ${fixed(create?.p99Ms)} / ${fixed(mcpCreate?.p99Ms)} |`,
    );
  }
  return lines;
}

/**
 * Issue 21's view: Funil against a thin server on a minimal schema (one index, no events), split in
 * two — what the schema costs PostgreSQL (the same-schema reference against the minimal one, both
 * thin), and what Funil's Node side costs (its CPU against the thin server's). req/s: the mean of
 * the rounds' ratios; CPU: the ratio of the means.
 */
function schemaCostSection(rows: ResultRow[]): string[] {
  const lines = [
    '## Against a thin server on a minimal schema (issue 21)',
    '',
    '`reference-minimal` is the reference server on tables with the workloads’ columns only, a primary key and the ' +
      'one index the list needs (`bench/reference/queries.ts`, MINIMAL_SCHEMA): no change feed, no custom fields, no ' +
      'search or sort indexes. Funil ÷ minimal is what a user weighs; same-schema reference ÷ minimal is the part of ' +
      'it that is Funil’s schema (indexes, the event each write adds), the same SQL sent by the same thin server.',
    '',
    '| workload | Funil req/s ÷ minimal | Node CPU/req Funil ÷ minimal | PostgreSQL CPU/req Funil ÷ minimal | PostgreSQL CPU/req same-schema ref ÷ minimal |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const workload of ['W1', 'W2', 'W3', 'W4', 'W5'] as const) {
    const [funil, same, minimal] = (['funil-postgres', 'reference', 'reference-minimal'] as const).map((target) =>
      findRow(rows, target, workload),
    );
    if (!minimal || !funil) continue;
    lines.push(
      `| ${workload} ${WORKLOADS[workload]} | ${ratioCell(minimal, funil, 1)} | ${over(funil.cpuMsPerRequest, minimal.cpuMsPerRequest)} | ` +
        `${over(funil.dbCpuMsPerRequest, minimal.dbCpuMsPerRequest)} | ${over(same?.dbCpuMsPerRequest, minimal.dbCpuMsPerRequest)} |`,
    );
  }
  return lines;
}

/**
 * Issue 21's goal 2 at one offered rate: the CPU each target spends per request when none of them
 * runs flat out. CPU: the ratio of the means, and each round's ratio in brackets.
 */
function pacedSection({ ratePerSec, rows }: RunInfo['paced']): string[] {
  const lines = [
    `## Node CPU per request at one offered rate (${count(ratePerSec)} req/s; issue 21, goal 2)`,
    '',
    'Run flat out, as above, a server answering 12,000 requests a second has its wake-ups and system calls ' +
      'batched in a way one answering 3,000 has not, which lowers its CPU per request. Here each target is offered ' +
      `the same ${count(ratePerSec)} requests a second (each connection waits between an answer and its next ` +
      'request), below what any of them serves, after the workloads above and on the same process; a slower answer ' +
      'delays the next request, so the rate reached is a little lower, most for the slowest. No /health probe runs ' +
      'beside these: every request counted is the workload’s.',
    '',
    '| workload | req/s reached: Funil / same-schema ref / minimal | Node CPU ms/req: Funil / same-schema ref / minimal | Funil ÷ minimal | Funil ÷ same-schema ref | PostgreSQL CPU ms/req: Funil / minimal | PostgreSQL Funil ÷ minimal |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const workload of WORKLOAD_IDS) {
    const [funil, same, minimal] = (['funil-postgres', 'reference', 'reference-minimal'] as const).map((target) =>
      findRow(rows, target, workload),
    );
    if (!funil) continue;
    const ms = (row: ResultRow | undefined, value: (row: ResultRow) => number | null) =>
      row ? fixed(value(row), 3) : '–';
    lines.push(
      `| ${workload} ${WORKLOADS[workload]} | ${[funil, same, minimal].map((row) => (row ? count(row.rps) : '–')).join(' / ')} | ` +
        `${[funil, same, minimal].map((row) => ms(row, (r) => r.cpuMsPerRequest)).join(' / ')} | ` +
        `${cpuRatioCell(minimal, funil, (r) => r.cpuMsPerRequest)} | ${cpuRatioCell(same, funil, (r) => r.cpuMsPerRequest)} | ` +
        `${ms(funil, (r) => r.dbCpuMsPerRequest)} / ${ms(minimal, (r) => r.dbCpuMsPerRequest)} | ` +
        `${cpuRatioCell(minimal, funil, (r) => r.dbCpuMsPerRequest)} |`,
    );
  }
  return lines;
}

/** `other` ÷ `base` of a per-request CPU figure: the ratio of the means, and each round's. */
function cpuRatioCell(
  base: ResultRow | undefined,
  other: ResultRow | undefined,
  value: (figures: Pick<Measurement, 'cpuMsPerRequest' | 'dbCpuMsPerRequest'>) => number | null,
): string {
  if (!base || !other) return '–';
  const ratios = roundRatios(base, other, value);
  return `${over(value(other), value(base))} (${ratios.map((r) => r.toFixed(2)).join(' / ')})`;
}

/**
 * SPEC §14's outbox on a write: the same thin server, schema and statements, with the event each
 * write adds (`reference`) and without it (`reference-no-events`), per round.
 */
function outboxSection(rows: ResultRow[]): string[] {
  const lines = [
    '## The change feed’s cost on a write (SPEC §14), before and after',
    '',
    '`reference-no-events` is the reference on Funil’s schema sending Funil’s statements less the event each write ' +
      'adds in its own statement (`bench/reference/queries.ts`, NO_EVENT_SQL); `reference` sends them whole. The ' +
      'event is built by the database (Funil’s Node side does not see it), so the difference is the outbox’s cost. ' +
      'req/s: each round’s ratio (in brackets); CPU: the ratio of the means.',
    '',
    '| workload | req/s without events | req/s with | with ÷ without | PostgreSQL CPU/req with ÷ without | server CPU/req with ÷ without |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const workload of OUTBOX_WORKLOADS) {
    const [without, whole] = (['reference-no-events', 'reference'] as const).map((target) =>
      findRow(rows, target, workload),
    );
    if (!without || !whole) continue;
    lines.push(
      `| ${workload} ${WORKLOADS[workload]} | ${roundsCell(without, 1)} | ${roundsCell(whole, 1)} | ${ratioCell(without, whole, 1)} | ` +
        `${over(whole.dbCpuMsPerRequest, without.dbCpuMsPerRequest)} | ${over(whole.cpuMsPerRequest, without.cpuMsPerRequest)} |`,
    );
  }
  return lines;
}

const over = (a: number | null | undefined, b: number | null | undefined) =>
  a != null && b != null && b > 0 ? ratio(a / b) : '–';

const FUNIL_TARGETS = ['funil-postgres', 'funil-embedded'] as const;

function findRow(rows: ResultRow[], target: TargetName, workload: WorkloadId): ResultRow | undefined {
  return rows.find((row) => row.target === target && row.workload === workload);
}

/** req/s (× scale), the mean and each round's. */
function roundsCell(row: ResultRow | undefined, scale: number): string {
  return row ? `${count(row.rps * scale)} (${row.rounds.map((round) => count(round.rps * scale)).join(' / ')})` : '–';
}

/** `other` ÷ `base` in req/s (× scale), per round: their mean, and each round's. */
function ratioCell(base: ResultRow | undefined, other: ResultRow | undefined, scale: number): string {
  if (!base || !other) return '–';
  const ratios = roundRatios(base, other, (round) => round.rps).map((value) => value * scale);
  return `${ratio(mean(ratios))} (${ratios.map((value) => value.toFixed(2)).join(' / ')})`;
}

/** `value` of each of `other`'s rounds ÷ the same of `base`'s round with the same number. */
function roundRatios(base: ResultRow, other: ResultRow, value: (round: RoundFigures) => number | null): number[] {
  return other.rounds.flatMap((round) => {
    const same = base.rounds.find((candidate) => candidate.round === round.round);
    const [a, b] = [value(round), same ? value(same) : null];
    return a !== null && b ? [a / b] : [];
  });
}

/** SPEC §14: how fast one reader catches up with a tenant's feed. */
function feedSection(feed: RunInfo['feed']): string[] {
  return [
    `## The change feed (SPEC §14): one reader draining it, \`limit=${FEED_PAGE}\``,
    '',
    'After the workloads, one client walks the tenant’s whole feed from its start, page after page (`X-Next-Cursor`), ' +
      'the events being those the workloads’ writes made.',
    '',
    '| target | round | events | pages | events/s | page p50 ms | page max ms |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...feed.map(
      (drain) =>
        `| ${drain.target} | ${drain.round} | ${count(drain.events)} | ${drain.pages} | ${count(drain.eventsPerSec)} | ` +
        `${fixed(drain.pageP50Ms, 1)} | ${fixed(drain.pageMaxMs, 1)} |`,
    ),
  ];
}
