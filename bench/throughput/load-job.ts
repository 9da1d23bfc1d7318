/** What the harness asks of a load generator, and what it gets back; wrk and autocannon both do it. */
import type { WorkloadData, WorkloadId } from './workloads.js';

export interface LoadJob {
  /** http://host:port */
  url: string;
  token: string;
  workload: WorkloadId;
  data: WorkloadData;
  connections: number;
  warmupSec: number;
  durationSec: number;
  /**
   * Requests a second offered over all connections, each connection pausing between its requests;
   * unset, each sends its next request as soon as the last is answered (the server's capacity).
   */
  ratePerSec?: number;
}

export interface LoadResult {
  /** Responses received in the measured run, of any status. */
  responses: number;
  /** Failed answers (non-2xx for autocannon; 4xx and 5xx for wrk), and MCP answers (a 200) whose tool result is an error. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  statusCodes: Record<string, number>;
  durationSec: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Mean size of a response, headers and body, as the load generator counts it. */
  bytesPerResponse: number;
  /** The load generator's own CPU time (user + system) over the measured run, in ms. */
  cpuMs: number | null;
}

/** A load generator kept for every workload of one target run: a warm-up whose figures are dropped, then the measured run. */
export interface LoadGenerator {
  /** Calls onMeasuring just before the measured run's load starts. */
  run(job: LoadJob, onMeasuring: () => void): Promise<LoadResult>;
  stop(): Promise<void>;
}

/** An MCP tool's failure travels in a 200: its result says `isError`. */
export const TOOL_FAILED = '"isError":true';
