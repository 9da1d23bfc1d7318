import { LRUCache } from 'lru-cache';

interface Window {
  count: number;
  /** `performance.now()` when the window closes: a step of the wall clock neither extends nor ends it. */
  end: number;
}

interface Counters {
  get(key: string): Window | undefined;
  set(key: string, window: Window): unknown;
}

type Callback = (error: Error | null, state: { current: number; ttl: number }) => void;

/** How many client addresses are counted at once; past it, the address heard from least recently is forgotten. */
const ADDRESS_COUNTERS = 10_000;
const SWEEP_INTERVAL_MS = 60_000;

/**
 * The in-process store of @fastify/rate-limit, with SPEC §10's two kinds of key kept apart. A
 * `token:` counter belongs to a token known to exist, so there are only as many as there are real
 * tokens in use: they are never evicted, only dropped once their window has passed. Every other
 * key (`ip:`) comes from traffic anyone can make up, so those live in a bounded LRU, and a flood
 * of them can push out only each other. The library's own store keeps both in one LRU of 5,000,
 * where such a flood resets a real token's counter.
 */
export class RateCounters {
  readonly #tokens = new Map<string, Window>();
  readonly #addresses = new LRUCache<string, Window>({ max: ADDRESS_COUNTERS });
  #sweptAt = performance.now();

  incr(key: string, callback: Callback, timeWindow: number, max: number): void {
    const now = performance.now();
    this.#sweep(now);
    const counters = this.#countersOf(key);
    let window = counters.get(key);
    if (window === undefined || now >= window.end) {
      window = { count: 0, end: now + timeWindow };
      counters.set(key, window);
    }
    window.count++;
    // A refusal says `Retry-After: N`, N the seconds left rounded up: the window stays closed for
    // all of them, so that nothing gets through before the time the client was given.
    let ttl = window.end - now;
    if (window.count > max) {
      ttl = wholeSeconds(ttl);
      window.end = now + ttl;
    }
    callback(null, { current: window.count, ttl });
  }

  read(key: string, callback: Callback): void {
    const now = performance.now();
    const window = this.#countersOf(key).get(key);
    const open = window !== undefined && now < window.end;
    callback(null, open ? { current: window.count, ttl: window.end - now } : { current: 0, ttl: 0 });
  }

  /** The library asks each route with limits of its own for a child store; every route here shares one. */
  child(): this {
    return this;
  }

  #countersOf(key: string): Counters {
    return key.startsWith('token:') ? this.#tokens : this.#addresses;
  }

  /** Once a minute, forgets the token counters whose window has passed. */
  #sweep(now: number): void {
    if (now - this.#sweptAt < SWEEP_INTERVAL_MS) return;
    this.#sweptAt = now;
    for (const [key, window] of this.#tokens) if (now >= window.end) this.#tokens.delete(key);
  }
}

/** `ms` rounded up to whole seconds, as Retry-After says them. */
export function wholeSeconds(ms: number): number {
  return Math.ceil(ms / 1000) * 1000;
}
