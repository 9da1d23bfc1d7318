/**
 * autocannon, in a process of its own (forked by AutocannonLoad, which talks to it over IPC): a
 * warm-up run whose figures are thrown away, then the measured run. Latency
 * percentiles come from every response's own time (autocannon's histogram keeps whole milliseconds,
 * too coarse for sub-millisecond answers).
 */
import autocannon from 'autocannon';
import { type LoadJob, type LoadResult, TOOL_FAILED } from './load-job.js';
import { type BenchRequest, MCP_WORKLOADS, requestMaker } from './workloads.js';

export type WorkerMessage =
  | { type: 'measuring' }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; message: string };

function fire(
  job: LoadJob,
  seconds: number,
  latencies?: number[],
  toolErrors = { count: 0 },
): Promise<autocannon.Result> {
  const next = requestMaker(job.workload, job.data);
  // Reading bodies costs the load generator: only the MCP workloads, whose statuses cannot tell.
  const onResponse = MCP_WORKLOADS.has(job.workload)
    ? (_status: number, body: string) => {
        if (body.includes(TOOL_FAILED)) toolErrors.count++;
      }
    : undefined;
  const authorization = `Bearer ${job.token}`;
  const withBody = { authorization, 'content-type': 'application/json' };
  const setupRequest = (request: autocannon.Request): autocannon.Request => {
    const made: BenchRequest = next();
    const headers = made.body === undefined ? { authorization } : withBody;
    return {
      ...request,
      method: made.method,
      path: made.path,
      headers: made.headers ? { ...headers, ...made.headers } : headers,
      ...(made.body !== undefined && { body: made.body }),
    };
  };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        ...(job.ratePerSec && { overallRate: job.ratePerSec }),
        pipelining: 1,
        duration: seconds,
        timeout: 10,
        requests: [{ setupRequest, ...(onResponse && { onResponse }) }],
      },
      (error: unknown, result: autocannon.Result) => (error ? reject(error) : resolve(result)),
    );
    if (latencies) instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  });
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function runJob(job: LoadJob, send: (message: WorkerMessage) => void): Promise<void> {
  if (job.warmupSec > 0) await fire(job, job.warmupSec);
  const latencies: number[] = [];
  send({ type: 'measuring' });
  const toolErrors = { count: 0 };
  const cpuAtStart = process.cpuUsage();
  const result = await fire(job, job.durationSec, latencies, toolErrors);
  const cpu = process.cpuUsage(cpuAtStart);
  const sorted = Float64Array.from(latencies).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
  const durationSec = result.duration;
  send({
    type: 'result',
    result: {
      responses: sorted.length,
      non2xx: result.non2xx + toolErrors.count,
      errors: result.errors,
      statusCodes,
      durationSec,
      rps: sorted.length / durationSec,
      p50Ms: percentile(sorted, 50),
      p90Ms: percentile(sorted, 90),
      p99Ms: percentile(sorted, 99),
      maxMs: percentile(sorted, 100),
      bytesPerResponse: result['2xx'] ? result.throughput.total / result['2xx'] : 0,
      cpuMs: (cpu.user + cpu.system) / 1000,
    },
  });
}

const send = (message: WorkerMessage) => process.send?.(message);
process.on('message', (job: LoadJob | 'exit') => {
  if (job === 'exit') {
    process.disconnect();
    return;
  }
  runJob(job, send).catch((error: unknown) =>
    send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
