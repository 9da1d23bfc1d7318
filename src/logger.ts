import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

/** Structured JSON logs; credentials are redacted should anything ever try to log them. */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'token', '*.token'],
      censor: '[redacted]',
    },
  });
}
