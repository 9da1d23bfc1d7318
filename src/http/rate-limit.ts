import { isIPv6 } from 'node:net';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { presentedToken } from '../auth/presented-token.js';
import { tooManyRequests } from '../shared/errors.js';
import { messages } from '../shared/messages.js';
import { RateCounters } from './rate-counters.js';
import { redisRateCounters } from './redis-rate-counters.js';
import { appendRouteHook } from './route-hooks.js';

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

export const perAddress: RateLimitKey = (request) => `ip:${addressKey(request.ip)}`;

/** A token's own bucket; only asked once the token is known valid (after authentication). */
export const perToken: RateLimitKey = (request) => `token:${presentedToken(request).hash}`;

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

type Limit = Awaited<ReturnType<ReturnType<FastifyInstance['createRateLimit']>>>;
type Check = (request: FastifyRequest, options?: { increment?: boolean }) => Promise<Limit>;

/** The RateLimit-* headers of `limit` on the answer; past it, a 429 `rate_limited` with Retry-After. */
function apply(reply: FastifyReply, limit: Limit, refuse = true): void {
  if (limit.isAllowed) return;
  reply.header('ratelimit-limit', limit.max);
  reply.header('ratelimit-remaining', limit.remaining);
  reply.header('ratelimit-reset', limit.ttlInSeconds);
  if (refuse && limit.isExceeded) {
    const seconds = Math.max(1, limit.ttlInSeconds);
    throw tooManyRequests(messages.rateLimited(seconds), seconds);
  }
}

/**
 * SPEC §10 for one scope: `max` requests per minute per key, counted by @fastify/rate-limit in
 * this process (RateCounters) or in Redis (redisRateCounters), the RateLimit-* headers on every
 * answer, 429 `rate_limited` with Retry-After beyond it. The hooks that count are installed by the
 * caller, each where it belongs among the scope's other hooks.
 */
export async function rateLimiter(
  scope: FastifyInstance,
  options: { max: number; redis: Redis | undefined; nameSpace: string },
): Promise<(keyOf: RateLimitKey) => Check> {
  await scope.register(rateLimit, {
    // No hook of the library's own: the scope decides where each count is made.
    global: false,
    max: options.max,
    timeWindow: 60_000,
    // Without Redis: counters that other clients' traffic cannot evict (RateCounters).
    store: options.redis ? redisRateCounters(options.redis, options.nameSpace) : RateCounters,
    skipOnError: true,
  });
  return (keyOf) => scope.createRateLimit({ keyGenerator: keyOf }) as Check;
}

/** Every request of `scope` counted against its client address (the admin API). */
export async function limitRateByAddress(
  scope: FastifyInstance,
  options: { max: number; redis: Redis | undefined; nameSpace: string },
): Promise<void> {
  const byAddress = (await rateLimiter(scope, options))(perAddress);
  scope.addHook('onRoute', (route) => {
    appendRouteHook(route, 'onRequest', async (request, reply) => apply(reply, await byAddress(request)));
  });
}

export interface TokenRateLimits {
  /** Installs, at this point of each route's hooks, the count of a request whose token is not known valid against its address. */
  countUnknownTokens(scope: FastifyInstance): void;
  /** Installs, at this point of each route's hooks (after authentication), the count against the token. */
  countTokens(scope: FastifyInstance): void;
  /** Puts the token's counters on an answer that is not counted (a refusal of fair share). */
  showTokenCounters(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

/**
 * SPEC §10 on the external API. A request whose token is not known valid, a made-up one included,
 * counts against its client address before anything else, and before any database lookup: a flood
 * of invented tokens meets one budget, not a fresh one per token. Once authenticated (and admitted
 * by fair share, whose refusals are not counted), a request counts against its token, whose
 * counters its answer carries, on its first request too.
 */
export async function limitRateByToken(
  scope: FastifyInstance,
  options: { max: number; redis: Redis | undefined; nameSpace: string; knowsValid: (tokenHash: string) => boolean },
): Promise<TokenRateLimits> {
  const limiter = await rateLimiter(scope, options);
  const byAddress = limiter(perAddress);
  const byToken = limiter(perToken);
  const unknownToken = async (request: FastifyRequest, reply: FastifyReply) => {
    const { hash } = presentedToken(request);
    if (hash === undefined || !options.knowsValid(hash)) apply(reply, await byAddress(request));
  };
  const knownToken = async (request: FastifyRequest, reply: FastifyReply) => apply(reply, await byToken(request));
  return {
    countUnknownTokens: (routes) =>
      routes.addHook('onRoute', (route) => appendRouteHook(route, 'onRequest', unknownToken)),
    countTokens: (routes) =>
      routes.addHook('onRoute', (route) => {
        if (!route.config?.public) appendRouteHook(route, 'onRequest', knownToken);
      }),
    showTokenCounters: async (request, reply) => apply(reply, await byToken(request, { increment: false }), false),
  };
}
