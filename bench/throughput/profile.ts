/**
 * Reads V8 .cpuprofile files (node --cpu-prof) and says where the CPU went, per request.
 * Time is counted in samples × the sampling interval, not in the gaps between samples: on a busy
 * machine a process that is not scheduled for 100 ms would otherwise charge those 100 ms to
 * whatever function it happened to be in.
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  /** Whether only the samples inside the measured span were kept (else: the whole process life). */
  windowed: boolean;
  windowMs: number;
  intervalMs: number;
  /** CPU ms (samples × interval), idle excluded. */
  busyMs: number;
  self: Map<string, number>;
  packages: Map<string, number>;
  inclusive: Map<string, number>;
}

const SPECIAL = new Set(['(root)', '(program)', '(idle)', '(garbage collector)']);
const REFERENCE_DIR = '/node_modules/.cache/funil-bench/';

function packageOf(url: string, functionName: string): string {
  if (SPECIAL.has(functionName)) return functionName;
  if (!url) return '(native / V8 builtins)';
  if (url.startsWith('node:')) return 'node core';
  if (url.includes(REFERENCE_DIR)) return 'bench reference';
  const match = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g);
  if (match) return (match[match.length - 1] as string).replace('node_modules/', '');
  if (url.includes('/dist/')) return 'funil (dist/)';
  return url;
}

function shortUrl(url: string): string {
  const reference = url.indexOf(REFERENCE_DIR);
  if (reference >= 0) return `bench/${url.slice(reference + REFERENCE_DIR.length)}`;
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url;
}

/** Application and library code: what a change in Funil or its dependencies could touch. */
function isCode(url: string): boolean {
  return url.includes('/node_modules/') || url.includes('/dist/');
}

/**
 * Self, per-package and inclusive CPU time. With `windowUs` (monotonic µs, the clock of the
 * profile's timestamps) only the samples inside that span count: start-up, warm-up and shutdown
 * are left out.
 */
export async function summariseProfile(file: string, windowUs?: [number, number]): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const keyOf = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    return `${functionName || '(anonymous)'}\u0000${url ? `${shortUrl(url)}:${lineNumber + 1}` : ''}`;
  };
  const stamps: number[] = [];
  let at = profile.startTime;
  for (const delta of profile.timeDeltas) {
    at += delta;
    stamps.push(at);
  }
  const inSpan = (i: number) => !windowUs || ((stamps[i] ?? 0) >= windowUs[0] && (stamps[i] ?? 0) <= windowUs[1]);
  const windowed = windowUs !== undefined && stamps.some((_, i) => inSpan(i));
  const sortedDeltas = [...profile.timeDeltas].sort((a, b) => a - b);
  const intervalMs = (sortedDeltas[Math.floor(sortedDeltas.length / 2)] ?? 1000) / 1000;

  const self = new Map<string, number>();
  const packages = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + intervalMs);
  let busyMs = 0;
  profile.samples.forEach((id, i) => {
    if (windowed && !inSpan(i)) return;
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return;
    busyMs += intervalMs;
    add(self, keyOf(node));
    add(packages, packageOf(node.callFrame.url, node.callFrame.functionName));
    const seen = new Set<string>();
    for (let frameId: number | undefined = id; frameId !== undefined; frameId = parent.get(frameId)) {
      const frame = byId.get(frameId) as ProfileNode;
      if (SPECIAL.has(frame.callFrame.functionName) || !isCode(frame.callFrame.url)) continue;
      const frameKey = keyOf(frame);
      if (seen.has(frameKey)) continue;
      seen.add(frameKey);
      add(inclusive, frameKey);
    }
  });
  const windowMs =
    windowed && windowUs ? (windowUs[1] - windowUs[0]) / 1000 : (profile.endTime - profile.startTime) / 1000;
  return { windowed, windowMs, intervalMs, busyMs, self, packages, inclusive };
}

export interface ProfiledRun {
  target: string;
  summary: ProfileSummary;
  /** Requests served in the measured span (the /health probes included). */
  requests: number;
  rps: number;
  /** The server process's CPU (user + system, from /proc) ÷ requests over the same span. */
  processCpuMsPerRequest: number | null;
  file: string;
}

const µs = (ms: number, requests: number) => (requests ? (1000 * ms) / requests : 0);
const cell = (value: number) => value.toFixed(0);
const code = (text: string) => (text ? `\`${text.replaceAll('|', '\\|').replaceAll('`', "'")}\`` : '');

function functionTable(run: ProfiledRun, map: Map<string, number>, count: number): string[] {
  return [
    '| function | where | µs per request | % of busy |',
    '|---|---|---:|---:|',
    ...[...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([key, ms]) => {
        const [name = '', where = ''] = key.split('\u0000');
        return `| ${code(name)} | ${code(where)} | ${cell(µs(ms, run.requests))} | ${((100 * ms) / run.summary.busyMs).toFixed(1)} |`;
      }),
  ];
}

function overview(run: ProfiledRun): string {
  const { summary } = run;
  return (
    `- **${run.target}**: ${Math.round(run.rps)} req/s while profiled; ` +
    `${summary.windowed ? 'the measured span' : 'the whole process life (the span could not be matched)'}, ` +
    `${(summary.windowMs / 1000).toFixed(1)} s: ${(summary.busyMs / 1000).toFixed(2)} s of CPU on the JavaScript thread ` +
    `(${((100 * summary.busyMs) / summary.windowMs).toFixed(0)} % of one core), ` +
    `**${cell(µs(summary.busyMs, run.requests))} µs per request** (${run.requests.toLocaleString('en')} requests)` +
    `${run.processCpuMsPerRequest === null ? '' : `, against ${cell(1000 * run.processCpuMsPerRequest)} µs of the process's CPU by /proc`}; ` +
    `profile \`${run.file}\``
  );
}

export function profileMarkdown(
  workload: string,
  funil: ProfiledRun,
  reference: ProfiledRun | undefined,
  context: string,
): string {
  const lines = [
    `# CPU profile under ${workload} (generated by \`npm run bench\`)`,
    '',
    context,
    '',
    overview(funil),
    ...(reference ? [overview(reference)] : []),
    '',
    'Times are samples × the sampling interval, divided by the requests served in the span. Open a',
    '`.cpuprofile` in Chrome DevTools (Performance › Load profile) or VS Code for the call trees.',
    '',
    "A system call's samples (`writev` above all) are not all CPU: a thread preempted inside one takes",
    'its next sample there when it runs again, and on loopback the PostgreSQL backend that a write wakes',
    "often takes the writing thread's core. The process's CPU by /proc (user + system, all threads) is",
    'the measure; the samples say where the thread was.',
    '',
    '## CPU per request by package (self time)',
    '',
  ];
  const packages = new Set([...funil.summary.packages.keys(), ...(reference?.summary.packages.keys() ?? [])]);
  const rows = [...packages]
    .map((name) => ({
      name,
      funil: µs(funil.summary.packages.get(name) ?? 0, funil.requests),
      reference: reference ? µs(reference.summary.packages.get(name) ?? 0, reference.requests) : 0,
    }))
    .sort((a, b) => b.funil - a.funil)
    .slice(0, 18);
  if (reference) {
    lines.push(
      '| package | funil-postgres µs/req | reference µs/req | Funil − reference |',
      '|---|---:|---:|---:|',
      ...rows.map(
        (row) =>
          `| ${code(row.name)} | ${cell(row.funil)} | ${cell(row.reference)} | ${row.funil - row.reference >= 0 ? '+' : ''}${cell(row.funil - row.reference)} |`,
      ),
      `| **total** | **${cell(µs(funil.summary.busyMs, funil.requests))}** | **${cell(µs(reference.summary.busyMs, reference.requests))}** | |`,
    );
  } else {
    lines.push(
      '| package | funil-postgres µs/req |',
      '|---|---:|',
      ...rows.map((row) => `| ${code(row.name)} | ${cell(row.funil)} |`),
    );
  }
  lines.push(
    '',
    '## funil-postgres: self time by function',
    '',
    ...functionTable(funil, funil.summary.self, 30),
    '',
    '## funil-postgres: inclusive time (the function and all it called; Funil and library code only)',
    '',
    ...functionTable(funil, funil.summary.inclusive, 30),
    '',
  );
  if (reference) {
    lines.push('## reference: self time by function', '', ...functionTable(reference, reference.summary.self, 15), '');
  }
  return lines.join('\n');
}
