/**
 * One measured run of one workload against one running HTTP server: the load comes from a forked
 * load generator, while this process watches the server (CPU time, peak RSS, its PostgreSQL
 * backends' CPU time, bytes logged) and times a GET /health every 10 ms on a kept-alive connection
 * of its own: how long the server's event loop keeps a trivial request waiting.
 */
import { Agent, get } from 'node:http';
import type { LoadGenerator, LoadJob, LoadResult } from './load-job.js';
import { CpuSpan, cpuMs, PeakRss } from './proc.js';
import { fileSize, type RunningServer } from './server-process.js';

export interface LatencySummary {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface LoopDelay {
  meanMs: number;
  p99Ms: number;
  maxMs: number;
}

export interface Measurement extends LoadResult {
  peakRssMb: number | null;
  /** Server process CPU (user + system) ÷ requests served (the /health probes included). */
  cpuMsPerRequest: number | null;
  /** CPU of the PostgreSQL backends serving this target ÷ responses (PostgreSQL targets only). */
  dbCpuMsPerRequest: number | null;
  /** CPU of the load generator ÷ responses: what the server did not get on a shared machine. */
  loadgenCpuMsPerRequest: number | null;
  /** Bytes the server wrote to its log ÷ responses. */
  logBytesPerRequest: number | null;
  /** GET /health timed every 10 ms during the measured run. */
  health: LatencySummary | null;
  /** Funil's own event-loop delay over the measured run (perf_hooks.monitorEventLoopDelay, via /metrics). */
  loopDelay: LoopDelay | null;
  loadAverage1m: number;
  /** The measured span on the monotonic clock, in µs (the clock V8's CPU profiles use). */
  windowUs: [number, number] | null;
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

export class HealthProbe {
  readonly #latencies: number[] = [];
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  #running = true;
  readonly #done: Promise<void>;

  constructor(url: string, intervalMs = 10) {
    this.#done = this.#loop(`${url}/health`, intervalMs);
  }

  async #loop(url: string, intervalMs: number): Promise<void> {
    while (this.#running) {
      const started = performance.now();
      await new Promise<void>((resolve) => {
        const request = get(url, { agent: this.#agent, timeout: 10_000 }, (response) => {
          response.resume();
          response.on('end', () => resolve());
        });
        request.on('error', () => resolve());
        request.on('timeout', () => request.destroy());
      });
      const elapsed = performance.now() - started;
      this.#latencies.push(elapsed);
      if (elapsed < intervalMs) await new Promise((resolve) => setTimeout(resolve, intervalMs - elapsed));
    }
  }

  async stop(): Promise<LatencySummary> {
    this.#running = false;
    await this.#done;
    this.#agent.destroy();
    return summarise(this.#latencies);
  }
}

export function summarise(latencies: number[]): LatencySummary {
  const sorted = Float64Array.from(latencies).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0;
  return { samples: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) };
}

export interface MeasuredTarget {
  server: RunningServer;
  /** The PIDs of the PostgreSQL backends serving it, when it runs on PostgreSQL. */
  databasePids?: () => Promise<number[]>;
  /** Its Prometheus endpoint (Funil's /metrics), when it has one. */
  metricsUrl?: string;
}

/**
 * The event-loop delay prom-client measured with perf_hooks.monitorEventLoopDelay since the
 * previous read: its collector resets the histogram on every scrape, so a read at the start of a
 * run and one at its end cover exactly the run.
 */
async function readLoopDelay(metricsUrl: string | undefined): Promise<LoopDelay | null> {
  if (!metricsUrl) return null;
  try {
    const text = await (await fetch(metricsUrl)).text();
    const seconds = (name: string) =>
      Number(new RegExp(`^nodejs_eventloop_lag_${name}_seconds(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
    const delay = { meanMs: seconds('mean') * 1000, p99Ms: seconds('p99') * 1000, maxMs: seconds('max') * 1000 };
    return Object.values(delay).every(Number.isFinite) ? delay : null;
  } catch {
    return null;
  }
}

/**
 * @param probeHealth whether to time GET /health beside the load; without it, every request counted
 *   is one of the workload's (a paced run's CPU per request would otherwise mix in a tenth of probes)
 */
export async function measureWorkload(
  target: MeasuredTarget,
  load: LoadGenerator,
  job: LoadJob,
  loadAverage: () => number,
  probeHealth = true,
): Promise<Measurement> {
  const { server } = target;
  let window:
    | {
        cpu: number | undefined;
        rss: PeakRss;
        probe: HealthProbe | undefined;
        db: Promise<CpuSpan | undefined>;
        logBytes: number;
        startUs: number;
        loopDelayReset: Promise<unknown>;
      }
    | undefined;
  const result = await load.run(job, () => {
    window = {
      cpu: cpuMs(server.pid),
      rss: new PeakRss(server.pid),
      probe: probeHealth ? new HealthProbe(server.url) : undefined,
      db: target.databasePids ? target.databasePids().then((pids) => new CpuSpan(pids)) : Promise.resolve(undefined),
      logBytes: fileSize(server.logFile),
      startUs: monotonicUs(),
      loopDelayReset: readLoopDelay(target.metricsUrl),
    };
  });
  const endUs = monotonicUs();
  if (!window) throw new Error('the load generator never started measuring');
  const cpuEnd = cpuMs(server.pid);
  const logBytesEnd = fileSize(server.logFile);
  const dbSpan = await window.db;
  const dbCpu = dbSpan && target.databasePids ? dbSpan.end(await target.databasePids()) : undefined;
  const peakRssMb = window.rss.stop();
  const health = (await window.probe?.stop()) ?? null;
  await window.loopDelayReset;
  const loopDelay = await readLoopDelay(target.metricsUrl);
  // The probe's requests are served too: they count as requests (about 100 a second, cheap ones).
  const served = result.responses + (health?.samples ?? 0);
  const per = (total: number | undefined) => (total === undefined || served === 0 ? null : total / served);
  return {
    ...result,
    peakRssMb,
    cpuMsPerRequest: per(cpuEnd !== undefined && window.cpu !== undefined ? cpuEnd - window.cpu : undefined),
    dbCpuMsPerRequest: per(dbCpu),
    loadgenCpuMsPerRequest: result.cpuMs === null || result.responses === 0 ? null : result.cpuMs / result.responses,
    logBytesPerRequest: per(logBytesEnd - window.logBytes),
    health,
    loopDelay,
    loadAverage1m: loadAverage(),
    windowUs: [window.startUs, endUs],
  };
}
