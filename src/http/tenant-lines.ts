import { ConnectionWaitTimeout } from '../db/connection-queue.js';

export interface TenantLinesOptions {
  /** Requests of one tenant served at once on this instance (its share of the database's connections). */
  readonly share: number;
  /** Requests of one tenant that may wait at once; past it, the next is refused. */
  readonly maxWaiting: number;
  /** The longest wait worth joining a line for (SPEC §10's bounded wait); a longer predicted wait is refused. */
  readonly boundMs: number;
}

/** Why a request was refused a place: its tenant's line is full, or too slow to serve it within the bound. */
export type Refusal = 'full' | 'slow';

interface Line {
  /** Places handed out and not given back: requests waiting, being read, or served. */
  held: number;
  serving: number;
  readonly waiting: Waiter[];
  /** The tenant's recent service time (a moving average), NaN until its first request is served. */
  serviceMs: number;
}

interface Waiter {
  readonly admit: () => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * How much of each new measurement the moving averages take: more of a faster one, so that a line
 * slowed for a moment (a stall of the database) is trusted again within a few requests.
 */
const WEIGHT_UP = 0.25;
const WEIGHT_DOWN = 0.5;

/**
 * SPEC §10, fair share by waiting in line: each tenant has `share` places in service on this
 * instance; its other requests wait in its own line, first come first served, and a request takes
 * the next free place when one is given back. The tenants' lines are independent: one tenant's
 * queue never delays another's requests here, and the connections they then ask for are taken in
 * turns by tenant (db/connection-queue.ts).
 *
 * A request is refused at once (never after waiting) when its tenant's line is full, or when the
 * wait it would face is already known to exceed the bound: the requests ahead of it, at the
 * tenant's recent service time, cannot be served within it. That decision is made before the work
 * piles up, from the line's length and measured times, not by a timer that a busy event loop would
 * fire late.
 */
export class TenantLines {
  readonly #lines = new Map<string, Line>();
  /** Every tenant's recent service time: the estimate for a tenant not yet measured. */
  #serviceMs = Number.NaN;

  constructor(readonly options: TenantLinesOptions) {}

  /** Asks for a place in `tenant`'s line: a Place to wait with, or why none is given. */
  join(tenant: string): Place | Refusal {
    const { share, maxWaiting, boundMs } = this.options;
    let line = this.#lines.get(tenant);
    if (line !== undefined) {
      // Every place past the share is a request that waits, or will.
      if (line.held >= share + maxWaiting) return 'full';
      if (this.predictedWaitMs(line) > boundMs) return 'slow';
    } else {
      line = { held: 0, serving: 0, waiting: [], serviceMs: Number.NaN };
      this.#lines.set(tenant, line);
    }
    line.held++;
    return new Place(this, tenant, line);
  }

  /** The wait a request joining `line` now would face: the places ahead of it, served `share` at a time. */
  predictedWaitMs(line: Line): number {
    const ahead = line.held - this.options.share + 1;
    if (ahead <= 0) return 0;
    const serviceMs = Number.isNaN(line.serviceMs) ? this.#serviceMs : line.serviceMs;
    return Number.isNaN(serviceMs) ? 0 : (ahead * serviceMs) / this.options.share;
  }

  /** For metrics and tests: how many of `tenant`'s requests hold a place, and how many of those are served. */
  stateOf(tenant: string): { held: number; serving: number; waiting: number } {
    const line = this.#lines.get(tenant);
    return { held: line?.held ?? 0, serving: line?.serving ?? 0, waiting: line?.waiting.length ?? 0 };
  }

  /** Takes a place in service in `line` if one is free and nobody waits before it. */
  tryServe(line: Line): boolean {
    if (line.serving >= this.options.share || line.waiting.length > 0) return false;
    line.serving++;
    return true;
  }

  /** Puts `waiter` at the end of `line`: `leave` admits it in turn, unless it is withdrawn first. */
  enqueue(line: Line, waiter: Waiter): void {
    line.waiting.push(waiter);
  }

  /** Takes `waiter` out of `line` (it timed out, or its request ended while it waited). */
  withdraw(line: Line, waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const at = line.waiting.indexOf(waiter);
    if (at >= 0) line.waiting.splice(at, 1);
  }

  /**
   * Gives back a place: if it was in service, the next waiting request takes it, and its time is
   * measured unless `servedMs` is undefined or it is not to be `measured`.
   */
  leave(tenant: string, line: Line, servedMs: number | undefined, measured: boolean): void {
    line.held--;
    if (servedMs !== undefined) {
      line.serving--;
      if (measured) {
        // One request served past the bound says no more than that the bound was passed.
        const sample = Math.min(servedMs, this.options.boundMs);
        line.serviceMs = average(line.serviceMs, sample);
        this.#serviceMs = average(this.#serviceMs, sample);
      }
      const next = line.waiting.shift();
      if (next !== undefined) {
        clearTimeout(next.timer);
        line.serving++;
        next.admit();
      }
    }
    // A tenant with nothing in its line costs nothing: its next request starts afresh, estimated
    // at every tenant's recent service time.
    if (line.held === 0) this.#lines.delete(tenant);
  }
}

function average(previous: number, sample: number): number {
  if (Number.isNaN(previous)) return sample;
  return previous + (sample < previous ? WEIGHT_DOWN : WEIGHT_UP) * (sample - previous);
}

/**
 * One request's place in its tenant's line, from the decision to admit it until its work is done.
 * It waits for service (`serve`) at most once; `leave` gives the place back, once, whatever happened.
 */
export class Place {
  #servedSince: number | undefined;
  #waiter: Waiter | undefined;
  #left = false;

  constructor(
    private readonly lines: TenantLines,
    private readonly tenant: string,
    private readonly line: Line,
  ) {}

  /**
   * Waits for a place in service, at most `waitMs`: undefined when one is free at once, else a
   * promise that rejects with ConnectionWaitTimeout when the wait runs out (then the place is
   * still held until `leave`, but never served).
   */
  serve(waitMs: number): Promise<void> | undefined {
    if (this.#left || this.#servedSince !== undefined || this.#waiter !== undefined) return undefined;
    if (this.lines.tryServe(this.line)) {
      this.#servedSince = performance.now();
      return undefined;
    }
    if (waitMs <= 0) return Promise.reject(new ConnectionWaitTimeout());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          this.#waiter = undefined;
          this.#servedSince = performance.now();
          resolve();
        },
        timer: setTimeout(() => {
          this.#waiter = undefined;
          this.lines.withdraw(this.line, waiter);
          reject(new ConnectionWaitTimeout());
        }, waitMs),
      };
      this.#waiter = waiter;
      this.lines.enqueue(this.line, waiter);
    });
  }

  /** Whether the request holds a place in service (rather than waiting, or not yet asking). */
  get served(): boolean {
    return this.#servedSince !== undefined;
  }

  /**
   * Gives the place back. A request that failed for want of the database (a 503) is not `measured`:
   * its time says how long the database was away, not how long the tenant's work takes, and
   * counting it would turn an outage's 503s into 429s.
   */
  leave(measured = true): void {
    if (this.#left) return;
    this.#left = true;
    // A request that ends while it waits (its client left, or its deadline answered): out of the
    // line. Its promise is left pending; nothing waits on it any more.
    if (this.#waiter !== undefined) this.lines.withdraw(this.line, this.#waiter);
    const servedMs = this.#servedSince === undefined ? undefined : performance.now() - this.#servedSince;
    this.lines.leave(this.tenant, this.line, servedMs, measured);
  }
}
