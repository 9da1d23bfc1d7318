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
  return destination ? pino(options, destination) : pino(options);
}
