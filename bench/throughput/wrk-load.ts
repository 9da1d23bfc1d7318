/**
 * wrk (Debian's package) as the load generator: C and epoll on one thread, a small fraction of the
 * CPU autocannon takes, which on a two-core machine is CPU the server and PostgreSQL get back.
 * Each run plays back a file of requests written here from workloads.ts (the same stream autocannon
 * sends), through wrk-requests.lua; its CPU time is the shell's `times` for its finished child.
 */
import { spawn, spawnSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LoadGenerator, type LoadJob, type LoadResult, TOOL_FAILED } from './load-job.js';
import { type BenchRequest, MCP_WORKLOADS, requestMaker, type WorkloadId } from './workloads.js';

const SCRIPT = fileURLToPath(new URL('./wrk-requests.lua', import.meta.url));
/** Requests written per second of a run: more than any target serves, so that writes repeat nothing. */
const REQUESTS_PER_SECOND = 6_000;
/** W6's requests carry 100 leads each, and are served a hundred times fewer a second. */
const PER_SECOND: Partial<Record<WorkloadId, number>> = { W6: 150 };
/** The shell runs wrk, then prints its finished children's CPU time (`times`, second line) to stderr. */
const WITH_CPU_TIME = 'wrk "$@"; status=$?; times >&2; exit $status';

interface WrkSummary {
  requests: number;
  durationUs: number;
  bytes: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  failures: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  maxUs: number;
}

/** Where wrk is, or why it cannot be used. */
export function findWrk(): { path: string } | { missing: string } {
  const found = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path ? { path } : { missing: 'wrk is not installed (Debian: apt-get install wrk)' };
}

/**
 * What each connection waits between an answer and its next request for `rate` a second over all of
 * them. The answer's own time comes on top, so the rate reached is a little lower, and lower still
 * for a slower server: the report gives the rate each target reached beside its CPU per request.
 */
function pauseMs(connections: number, rate: number): number {
  return Math.max(1, Math.round((connections * 1000) / rate));
}

/** One request per line, as wrk-requests.lua reads it. */
function requestLine(request: BenchRequest): string {
  const headers = Object.entries(request.headers ?? {}).map(([name, value]) => `\t${name}: ${value}`);
  return `${request.method}\t${request.path}\t${request.body ?? ''}${headers.join('')}\n`;
}

async function writeRequests(file: string, job: LoadJob, seconds: number): Promise<void> {
  const next = requestMaker(job.workload, job.data);
  const count = Math.ceil(seconds * (job.ratePerSec ?? PER_SECOND[job.workload] ?? REQUESTS_PER_SECOND));
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(requestLine(next()));
  await writeFile(file, lines.join(''));
}

/** `times` prints "0m1.230000s 0m0.040000s" per line: the shell's own, then its children's. */
function childCpuMs(stderr: string): number | null {
  const lines = stderr.trim().split('\n');
  const match = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(lines.at(-1) ?? '');
  if (!match) return null;
  const [userMin, userSec, systemMin, systemSec] = match.slice(1).map(Number) as [number, number, number, number];
  return ((userMin + systemMin) * 60 + userSec + systemSec) * 1000;
}

export class WrkLoad implements LoadGenerator {
  readonly #work: string;
  readonly #running = new Set<ReturnType<typeof spawn>>();

  /** @param work a directory for the request files, removed by the caller */
  constructor(work: string) {
    this.#work = work;
  }

  async run(job: LoadJob, onMeasuring: () => void): Promise<LoadResult> {
    if (job.warmupSec > 0) await this.#fire(job, job.warmupSec);
    return this.#fire(job, job.durationSec, onMeasuring);
  }

  async #fire(job: LoadJob, seconds: number, onStart?: () => void): Promise<LoadResult> {
    const file = join(this.#work, `wrk-${job.workload}-${process.hrtime.bigint()}.requests`);
    await writeRequests(file, job, seconds);
    try {
      onStart?.();
      const { stdout, stderr } = await this.#wrk([
        ...['--threads', '1', '--connections', String(job.connections), '--duration', `${seconds}s`],
        ...['--timeout', '10s', '--script', SCRIPT, job.url, '--', file, job.token],
        MCP_WORKLOADS.has(job.workload) ? TOOL_FAILED : '',
        ...(job.ratePerSec ? [String(pauseMs(job.connections, job.ratePerSec))] : []),
      ]);
      const line = stdout.split('\n').find((candidate) => candidate.startsWith('{"requests"'));
      if (!line) throw new Error(`wrk printed no summary:\n${stdout}\n${stderr}`);
      return result(JSON.parse(line) as WrkSummary, childCpuMs(stderr));
    } finally {
      await rm(file, { force: true });
    }
  }

  #wrk(args: string[]): Promise<{ stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      // A process group of its own, so that stop() ends wrk with the shell around it.
      const child = spawn('sh', ['-c', WITH_CPU_TIME, 'sh', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      this.#running.add(child);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk;
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk;
      });
      child.once('error', reject);
      child.once('close', (code, signal) => {
        this.#running.delete(child);
        if (code === 0) resolve({ stdout, stderr });
        else reject(new Error(`wrk ended with ${signal ?? `exit ${code}`}:\n${stdout}\n${stderr}`));
      });
    });
  }

  async stop(): Promise<void> {
    for (const child of this.#running) if (child.pid) process.kill(-child.pid, 'SIGKILL');
    this.#running.clear();
  }
}

function result(summary: WrkSummary, cpuMs: number | null): LoadResult {
  const durationSec = summary.durationUs / 1e6;
  const failed = summary.status + summary.failures;
  return {
    responses: summary.requests,
    non2xx: failed,
    errors: summary.connect + summary.read + summary.write + summary.timeout,
    // wrk counts answers with a status above 399, not each status.
    statusCodes: failed ? { '4xx or 5xx': summary.status, 'failed tool calls': summary.failures } : {},
    durationSec,
    rps: summary.requests / durationSec,
    p50Ms: summary.p50Us / 1000,
    p90Ms: summary.p90Us / 1000,
    p99Ms: summary.p99Us / 1000,
    maxMs: summary.maxUs / 1000,
    bytesPerResponse: summary.requests ? summary.bytes / summary.requests : 0,
    cpuMs,
  };
}
