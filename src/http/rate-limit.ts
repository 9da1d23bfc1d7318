import { isIPv6 } from 'node:net';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { presentedToken } from '../auth/presented-token.js';
import { ApiError } from '../shared/errors.js';
import { messages } from '../shared/messages.js';
import { RateCounters } from './rate-counters.js';

/** Counters in Redis when a URL is given (shared by every instance), else in this process. */
export async function openRateLimitStore(redisUrl: string | undefined, logger: Logger): Promise<Redis | undefined> {
  if (!redisUrl) return undefined;
  // Loaded only when used: ioredis adds some 20 MB to a process that does not need it.
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: 2_000,
    // Fail fast while Redis is away: the limiter then lets requests through rather than stall them.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  redis.on('error', (error) => logger.warn({ err: error }, 'rate-limit store (Redis) error'));
  try {
    await redis.connect();
  } catch (error) {
    logger.warn({ err: error }, 'Redis is unreachable: rate limits are not enforced until it answers');
  }
  return redis;
}

export type RateLimitKey = (request: FastifyRequest) => string;

/**
 * SPEC §10: a token known to be valid is its own bucket. Any other request, a made-up token
 * included, counts against its client address, decided before any database lookup: a flood of
 * invented tokens then meets one budget, not a fresh one per token.
 */
export function perTokenOrAddress(knowsValid: (tokenHash: string) => boolean): RateLimitKey {
  return (request) => {
    const { hash } = presentedToken(request);
    return hash !== undefined && knowsValid(hash) ? `token:${hash}` : perAddress(request);
  };
}

export const perAddress: RateLimitKey = (request) => `ip:${addressKey(request.ip)}`;

/**
 * An IPv4 address as it is; an IPv6 address by its /64, the block one subscriber gets, so that
 * walking through one's own addresses does not buy a fresh budget each time.
 */
export function addressKey(ip: string): string {
  if (!isIPv6(ip)) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1] as string;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * SPEC §10 for one scope: `max` requests per minute per key, RateLimit-* headers on every
 * answer, 429 `rate_limited` with Retry-After beyond it.
 */
export async function limitRate(
  scope: FastifyInstance,
  options: { max: number; redis: Redis | undefined; nameSpace: string; keyOf: RateLimitKey },
): Promise<void> {
  await scope.register(rateLimit, {
    global: true,
    max: options.max,
    timeWindow: 60_000,
    hook: 'onRequest',
    keyGenerator: options.keyOf,
    redis: options.redis,
    // Without Redis: counters that other clients' traffic cannot evict (RateCounters).
    ...(options.redis ? {} : { store: RateCounters }),
    nameSpace: options.nameSpace,
    skipOnError: true,
    enableDraftSpec: true,
    addHeadersOnExceeding: { 'ratelimit-limit': true, 'ratelimit-remaining': true, 'ratelimit-reset': true },
    addHeaders: { 'ratelimit-limit': true, 'ratelimit-remaining': true, 'ratelimit-reset': true, 'retry-after': true },
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'rate_limited', messages.rateLimited(Math.max(1, Math.ceil(context.ttl / 1000)))),
  });
}
