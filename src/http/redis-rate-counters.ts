import type { Redis } from 'ioredis';

type Callback = (error: Error | null, state?: { current: number; ttl: number }) => void;

/**
 * @fastify/rate-limit's Redis store counts as this one does, in one script, but a refusal there
 * leaves the window to end at any millisecond while `Retry-After` rounds the seconds up, so a
 * client could come back before the time it was given. Here, as in RateCounters, a refusal keeps
 * the window closed for the whole seconds it announces.
 */
const INCREMENT = `
local current = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if current == 1 or ttl < 0 then
  ttl = tonumber(ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ttl)
elseif current > tonumber(ARGV[2]) then
  local rounded = math.ceil(ttl / 1000) * 1000
  if rounded ~= ttl then
    redis.call('PEXPIRE', KEYS[1], rounded)
    ttl = rounded
  end
end
return {current, ttl}
`;

const READ = `
local current = redis.call('GET', KEYS[1])
if not current then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {tonumber(current), ttl}
`;

interface Scripts {
  funilRateIncrement(key: string, timeWindow: number, max: number): Promise<[number, number]>;
  funilRateRead(key: string): Promise<[number, number]>;
}

/** The counters of SPEC §10 in Redis, shared by every instance, under `prefix`. */
export function redisRateCounters(redis: Redis, prefix: string) {
  if (!('funilRateIncrement' in redis)) {
    redis.defineCommand('funilRateIncrement', { numberOfKeys: 1, lua: INCREMENT });
    redis.defineCommand('funilRateRead', { numberOfKeys: 1, lua: READ });
  }
  const scripts = redis as unknown as Scripts;
  return class RedisRateCounters {
    incr(key: string, callback: Callback, timeWindow: number, max: number): void {
      scripts.funilRateIncrement(prefix + key, timeWindow, max).then(
        ([current, ttl]) => callback(null, { current, ttl }),
        (error: Error) => callback(error),
      );
    }

    read(key: string, callback: Callback): void {
      scripts.funilRateRead(prefix + key).then(
        ([current, ttl]) => callback(null, { current, ttl }),
        (error: Error) => callback(error),
      );
    }

    child(): this {
      return this;
    }
  };
}
