import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.js';

/**
 * Structured JSON logs; credentials are redacted should anything ever try to log them, and so is
 * a database error's `detail`, which quotes the values of a failed row (SPEC §17: no personal
 * data in logs). `destination`: stdout unless given.
 */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'token', '*.token', 'err.detail'],
      censor: '[redacted]',
    },
  };
  return pino(options, destination ?? bufferedStdout());
}

/** Lines held until there are this many bytes of them (some 15 request lines)… */
const WRITE_BYTES = 4_096;
/** …or at the latest the next tick of a timer of this period: no line is held longer. */
const FLUSH_MS = 100;

/**
 * Standard output, written in batches. Unbuffered, pino writes each line as it comes, and each
 * write is a round trip through libuv's thread pool: at 1,000 requests a second, a thread woken and
 * an answer posted back per request line, 3–10 % of a request's CPU at 1,000 a second (bench/ab.ts).
 * Writes stay off the event loop (not `sync`: a slow reader of a pipe must never stall the API),
 * and pino writes out what is held when the process exits; a kill -9 loses at most the last
 * FLUSH_MS of lines.
 */
function bufferedStdout(): DestinationStream {
  return pino.destination({ minLength: WRITE_BYTES, periodicFlush: FLUSH_MS, sync: false });
}
