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

/** The young generation's share of V8's heap limit on 64-bit: three semi-spaces of 16 MiB. */
const YOUNG_GENERATION_BYTES = 48 * 1024 * 1024;

/**
 * 90 % of what the old generation may hold. V8's heap limit counts the young generation's reserve
 * too, and under `npm start`'s `--max-old-space-size=128` that is 176 MiB: 90 % of it (158 MiB) lies
 * past the 128 MiB at which V8 aborts, so the shedding would never come first.
 */
export function defaultMaxHeapUsedBytes(): number {
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
