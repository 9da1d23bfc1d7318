import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { presentedToken } from '../auth/presented-token.js';
import { ApiError } from '../shared/errors.js';
import { messages } from '../shared/messages.js';

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

/** A well-formed bearer token is its own bucket (SPEC §10: per token); anything else counts per address. */
function rateLimitKey(request: FastifyRequest): string {
  const { hash } = presentedToken(request);
  return hash !== undefined ? `token:${hash}` : `ip:${request.ip}`;
}

/**
 * SPEC §10 for one scope: `max` requests per minute per key, RateLimit-* headers on every
 * answer, 429 `rate_limited` with Retry-After beyond it.
 */
export async function limitRate(
  scope: FastifyInstance,
  options: { max: number; redis: Redis | undefined; nameSpace: string; perAddress?: boolean },
): Promise<void> {
  await scope.register(rateLimit, {
    global: true,
    max: options.max,
    timeWindow: 60_000,
    hook: 'onRequest',
    keyGenerator: options.perAddress ? (request) => request.ip : rateLimitKey,
    redis: options.redis,
    nameSpace: options.nameSpace,
    skipOnError: true,
    enableDraftSpec: true,
    addHeadersOnExceeding: { 'ratelimit-limit': true, 'ratelimit-remaining': true, 'ratelimit-reset': true },
    addHeaders: { 'ratelimit-limit': true, 'ratelimit-remaining': true, 'ratelimit-reset': true, 'retry-after': true },
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'rate_limited', messages.rateLimited(Math.max(1, Math.ceil(context.ttl / 1000)))),
  });
}
