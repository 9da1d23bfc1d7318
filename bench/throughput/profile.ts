/** Reads a V8 .cpuprofile (node --cpu-prof) and summarises where the time went. */
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

export interface ProfileEntry {
  name: string;
  where: string;
  ms: number;
  /** Share of the busy time (all samples but idle), in %. */
  percent: number;
}

export interface ProfileSummary {
  /** Whether only the samples inside the measured span were kept (else: the whole process life). */
  windowed: boolean;
  durationMs: number;
  busyMs: number;
  samples: number;
  selfByFunction: ProfileEntry[];
  selfByPackage: ProfileEntry[];
  inclusiveByFunction: ProfileEntry[];
}

const SPECIAL = new Set(['(root)', '(program)', '(idle)', '(garbage collector)']);

function packageOf(url: string, functionName: string): string {
  if (SPECIAL.has(functionName)) return functionName;
  if (!url) return '(native / V8 builtins)';
  if (url.startsWith('node:')) return 'node core';
  const match = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g);
  if (match) return (match[match.length - 1] as string).replace('node_modules/', '');
  if (url.includes('/dist/')) return 'funil (dist/)';
  return url;
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url;
}

/**
 * Self and inclusive time. With `windowUs` (monotonic µs, the clock of the profile's timestamps),
 * only the samples inside that span count: start-up, warm-up and shutdown are left out.
 */
/** Application and library code: what a change in Funil or its dependencies could touch. */
function isCode(url: string): boolean {
  return url.includes('/node_modules/') || url.includes('/dist/');
}

export async function summariseProfile(file: string, windowUs?: [number, number], top = 25): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const stamps: number[] = [];
  let at = profile.startTime;
  for (const delta of profile.timeDeltas) {
    at += delta;
    stamps.push(at);
  }
  const inWindow = (i: number) => !windowUs || ((stamps[i] ?? 0) >= windowUs[0] && (stamps[i] ?? 0) <= windowUs[1]);
  const windowed = windowUs !== undefined && stamps.some((_, i) => inWindow(i));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const keyOf = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    return `${functionName || '(anonymous)'}\u0000${url ? `${shortUrl(url)}:${lineNumber + 1}` : ''}`;
  };

  const self = new Map<string, number>();
  const packages = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let idle = 0;
  let total = 0;
  let samples = 0;
  profile.samples.forEach((id, i) => {
    if (windowed && !inWindow(i)) return;
    samples++;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(id);
    if (!node) return;
    total += ms;
    if (node.callFrame.functionName === '(idle)') {
      idle += ms;
      return;
    }
    const key = keyOf(node);
    self.set(key, (self.get(key) ?? 0) + ms);
    const pkg = packageOf(node.callFrame.url, node.callFrame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + ms);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at) as ProfileNode;
      if (SPECIAL.has(frame.callFrame.functionName) || !isCode(frame.callFrame.url)) continue;
      const frameKey = keyOf(frame);
      if (seen.has(frameKey)) continue;
      seen.add(frameKey);
      inclusive.set(frameKey, (inclusive.get(frameKey) ?? 0) + ms);
    }
  });
  const busy = total - idle;
  const entries = (map: Map<string, number>, count: number): ProfileEntry[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([key, ms]) => {
        const [name = '', where = ''] = key.split('\u0000');
        return { name, where, ms, percent: busy > 0 ? (100 * ms) / busy : 0 };
      });
  return {
    windowed,
    durationMs:
      windowed && windowUs ? (windowUs[1] - windowUs[0]) / 1000 : (profile.endTime - profile.startTime) / 1000,
    busyMs: busy,
    samples,
    selfByFunction: entries(self, top),
    selfByPackage: entries(packages, 15),
    inclusiveByFunction: entries(inclusive, top),
  };
}

export function profileMarkdown(summary: ProfileSummary, context: string): string {
  const table = (entries: ProfileEntry[], what: string) =>
    [
      `| ${what} | where | ms | % of busy |`,
      '|---|---|---:|---:|',
      ...entries.map(
        (entry) =>
          `| \`${entry.name.replaceAll('|', '\\|')}\` | ${entry.where ? `\`${entry.where}\`` : ''} | ${entry.ms.toFixed(0)} | ${entry.percent.toFixed(1)} |`,
      ),
    ].join('\n');
  return [
    '# CPU profile of the production server under W2 (generated)',
    '',
    context,
    '',
    `${summary.windowed ? 'Samples of the measured span only' : 'Every sample (the measured span could not be matched)'}: ` +
      `${(summary.durationMs / 1000).toFixed(1)} s, ${summary.samples.toLocaleString('en')} samples, busy (not idle) ` +
      `${(summary.busyMs / 1000).toFixed(2)} s, i.e. ${((100 * summary.busyMs) / summary.durationMs).toFixed(0)} % of one core.`,
    '',
    '## Self time by package',
    '',
    table(summary.selfByPackage, 'package'),
    '',
    '## Self time by function',
    '',
    table(summary.selfByFunction, 'function'),
    '',
    '## Inclusive time by function (the function and everything it called; Funil and library code only)',
    '',
    table(summary.inclusiveByFunction, 'function'),
    '',
  ].join('\n');
}
