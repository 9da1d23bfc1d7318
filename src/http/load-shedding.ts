import { getHeapStatistics } from 'node:v8';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import { serviceUnavailable } from '../shared/errors.js';
import { messages } from '../shared/messages.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answered even while the process sheds load: the liveness probe (SPEC §12: `/health` answers under load). */
    neverShed?: boolean;
  }
}

export interface LoadSheddingOptions {
  /** Mean event-loop delay, in ms, above which requests are shed; 0: never. */
  maxEventLoopDelayMs: number;
  /** V8 heap in use, in MiB, above which requests are shed; undefined: 90 % of the heap limit; 0: never. */
  maxHeapUsedMb: number | undefined;
}

/** The young generation's share of V8's heap limit on 64-bit Node 20 and 22: three semi-spaces of 16 MiB. */
const YOUNG_GENERATION_BYTES = 48 * 1024 * 1024;
const MiB = 1024 * 1024;

/**
 * 90 % of what the old generation may hold. When the process was started with
 * `--max-old-space-size` (`npm start` sets 128), that is the cap itself. Otherwise it is read off
 * V8's heap limit, which counts the young generation's reserve too: under `--max-old-space-size=128`
 * the limit is 176 MiB on Node 20 and 22 and 320 MiB on Node 24 (larger semi-spaces), and 90 % of
 * either lies past the 128 MiB at which V8 aborts, so the shedding would never come first.
 */
export function defaultMaxHeapUsedBytes(execArgv: readonly string[] = process.execArgv): number {
  const cap = execArgv
    .map((flag) => /^--max-old-space-size=(\d+)$/.exec(flag)?.[1])
    .filter(Boolean)
    .at(-1);
  if (cap !== undefined) return Math.floor(Number(cap) * MiB * 0.9);
  const limit = getHeapStatistics().heap_size_limit;
  return Math.floor(Math.max(limit / 2, limit - YOUNG_GENERATION_BYTES) * 0.9);
}

/** How often the event loop and the heap are measured: short, so that a burst is noticed quickly. */
const SAMPLE_INTERVAL_MS = 250;
const RETRY_AFTER_SECONDS = 2;

/**
 * Sheds load before it becomes a pile of timeouts: while the event loop lags or the heap nears its
 * limit, every request (but those marked `neverShed`) gets 503 `service_unavailable` with
 * `Retry-After`, in the SPEC §2 shape, before its body is even read.
 */
export async function shedLoad(app: FastifyInstance, options: LoadSheddingOptions): Promise<void> {
  const maxHeapUsedBytes =
    options.maxHeapUsedMb === undefined ? defaultMaxHeapUsedBytes() : options.maxHeapUsedMb * 1024 * 1024;
  await app.register(underPressure, {
    maxEventLoopDelay: options.maxEventLoopDelayMs,
    maxHeapUsedBytes,
    sampleInterval: SAMPLE_INTERVAL_MS,
    // A rejection goes to the error handler, which renders it; a resolution lets the request through.
    pressureHandler: async (request) => {
      if (request.routeOptions.config.neverShed) return;
      throw serviceUnavailable(messages.overloaded, RETRY_AFTER_SECONDS);
    },
  });
}
