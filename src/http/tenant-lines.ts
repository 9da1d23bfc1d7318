import { ConnectionWaitTimeout, passTurn, turnsBefore } from '../db/connection-queue.js';
import { RecentTimes } from '../shared/recent-times.js';

export interface TenantLinesOptions {
  /** Requests of one tenant served at once on this instance (its share of the database's connections). */
  readonly share: number;
  /** Requests served at once on this instance, all tenants together; unbounded when absent. */
  readonly capacity?: number;
  /** Requests of one tenant that may wait at once; past it, the next is refused. */
  readonly maxWaiting: number;
  /** The longest wait worth joining a line for (SPEC §10's bounded wait); a longer predicted wait is refused. */
  readonly boundMs: number;
  /** How long a query of the tenant asking for a database connection now would wait (Database.expectedWaitMs). */
  readonly connectionWaitMs?: (tenant: string) => number;
}

/** Why a request was refused a place: its tenant's line is full, or too slow to serve it within the bound. */
export type Refusal = 'full' | 'slow';

interface Line {
  readonly tenant: string;
  /** Places handed out and not given back: requests waiting, being read, or served. */
  held: number;
  serving: number;
  readonly waiting: Waiter[];
  /** The tenant's recent service times. */
  readonly served: RecentTimes;
}

interface Waiter {
  readonly admit: () => void;
  readonly timer: NodeJS.Timeout;
}

/** How many of a tenant's latest requests its service time is read from, and of every tenant's. */
const SERVED_KEPT = 16;
const ALL_SERVED_KEPT = 64;

/**
 * SPEC §10, fair share by waiting in line. Each tenant has `share` places in service on this
 * instance, and all tenants together `capacity`; a tenant's other requests wait in its own line,
 * first come first served, and the lines take turns for the places given back, one place each,
 * so that a quiet tenant waits for at most one request of each busy tenant, never for a busy
 * tenant's whole line. The connections the requests in service ask for are taken in turns by
 * tenant too (db/connection-queue.ts).
 *
 * A request is refused at once (never after waiting) when its tenant's line is full, or when it is
 * already known that it could not be answered within the bound: the requests ahead of it in its
 * line (at the tenant's recent service time), in the turns of every line (at every tenant's), or
 * for a database connection (at the recent time each holds one), and then its own work, take
 * longer. That
 * decision is made before the work piles up, from lengths and measured times (medians, which one
 * stall does not move), not by a timer that a busy event loop would fire late. And the capacity
 * keeps the work in service to what the process can answer within the bound, however many
 * tenants call at once.
 */
export class TenantLines {
  readonly #lines = new Map<string, Line>();
  /** The lines with requests waiting, in the order of their turns (a Map keeps insertion order). */
  readonly #turns = new Map<string, Line>();
  #serving = 0;
  #waiting = 0;
  readonly #served = new RecentTimes(ALL_SERVED_KEPT);
  readonly #capacity: number;

  constructor(readonly options: TenantLinesOptions) {
    this.#capacity = options.capacity ?? Number.POSITIVE_INFINITY;
  }

  /** Asks for a place in `tenant`'s line: a Place to wait with, or why none is given. */
  join(tenant: string): Place | Refusal {
    const { share, maxWaiting, boundMs } = this.options;
    let line = this.#lines.get(tenant);
    // Every place past the share is a request that waits, or will.
    if (line !== undefined && line.held >= share + maxWaiting) return 'full';
    if (this.predictedMs(tenant, line) > boundMs) return 'slow';
    if (line === undefined) {
      line = { tenant, held: 0, serving: 0, waiting: [], served: new RecentTimes(SERVED_KEPT) };
      this.#lines.set(tenant, line);
    }
    line.held++;
    return new Place(this, line);
  }

  /**
   * When a request joining `tenant`'s line now would be answered: its wait, the longest of three
   * (the places of its line ahead of it, served `share` at a time; the turns of every line ahead
   * of it, served `capacity` at a time; the queries ahead of it for a connection), and then its own
   * service, at the tenant's recent time (else every tenant's); 0 when it would not wait at all.
   */
  predictedMs(tenant: string, line: Line | undefined): number {
    let wait = this.options.connectionWaitMs?.(tenant) ?? 0;
    const { share } = this.options;
    // The tenant's own times for its own line: another tenant's (a flood of expensive lists) say
    // nothing of what this one sends, and would turn away an ordinary client's first burst.
    // The medians only where they count: most requests, in a line with room, need neither.
    const own = () => line?.served.median() ?? Number.NaN;
    const ahead = (line?.held ?? 0) - share + 1;
    if (ahead > 0 && !Number.isNaN(own())) wait = Math.max(wait, (ahead * own()) / share);
    if (this.#serving >= this.#capacity && !Number.isNaN(this.#served.median())) {
      const mine = Math.max(0, (line?.held ?? 0) - (line?.serving ?? 0));
      const others = [...this.#turns.values()].filter((other) => other !== line).map((other) => other.waiting.length);
      wait = Math.max(wait, (turnsBefore(mine, others) * this.#served.median()) / this.#capacity);
    }
    // A request that need not wait is never refused, however long its own work (a big batch).
    if (wait <= 0) return 0;
    const service = Number.isNaN(own()) ? this.#served.median() : own();
    return Number.isNaN(service) ? wait : wait + service;
  }

  /** For metrics: the requests served and waiting on this instance, all tenants together. */
  totals(): { serving: number; waiting: number } {
    return { serving: this.#serving, waiting: this.#waiting };
  }

  /** For metrics and tests: how many of `tenant`'s requests hold a place, and how many of those are served. */
  stateOf(tenant: string): { held: number; serving: number; waiting: number } {
    const line = this.#lines.get(tenant);
    return { held: line?.held ?? 0, serving: line?.serving ?? 0, waiting: line?.waiting.length ?? 0 };
  }

  /**
   * Takes a place in service in `line` if its share and the capacity allow and nobody of its line
   * waits before it. (While the capacity has room, no line that may be served waits: each place
   * given back goes to the next such line at once.)
   */
  tryServe(line: Line): boolean {
    if (line.serving >= this.options.share || line.waiting.length > 0 || this.#serving >= this.#capacity) return false;
    line.serving++;
    this.#serving++;
    return true;
  }

  /** Puts `waiter` at the end of `line`, whose turn comes in `leave`, unless it is withdrawn first. */
  enqueue(line: Line, waiter: Waiter): void {
    line.waiting.push(waiter);
    this.#waiting++;
    if (!this.#turns.has(line.tenant)) this.#turns.set(line.tenant, line);
  }

  /** Takes `waiter` out of `line` (it timed out, or its request ended while it waited). */
  withdraw(line: Line, waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const at = line.waiting.indexOf(waiter);
    if (at < 0) return;
    line.waiting.splice(at, 1);
    this.#waiting--;
    if (line.waiting.length === 0) this.#turns.delete(line.tenant);
  }

  /**
   * Gives back a place: if it was in service, the line whose turn it is takes it, and its time is
   * measured unless `servedMs` is undefined or it is not to be `measured`.
   */
  leave(line: Line, servedMs: number | undefined, measured: boolean): void {
    line.held--;
    if (servedMs !== undefined) {
      line.serving--;
      this.#serving--;
      if (measured) {
        line.served.add(servedMs);
        this.#served.add(servedMs);
      }
      this.#dispatch();
    }
    // A tenant with nothing in its line costs nothing: its next request starts afresh.
    if (line.held === 0) this.#lines.delete(line.tenant);
  }

  /** Gives free places to the lines in turn: each line below its share takes one and goes to the back. */
  #dispatch(): void {
    while (this.#serving < this.#capacity) {
      let next: Line | undefined;
      for (const line of this.#turns.values()) {
        if (line.serving < this.options.share) {
          next = line;
          break;
        }
      }
      if (next === undefined) return;
      const waiter = next.waiting.shift() as Waiter;
      this.#waiting--;
      passTurn(this.#turns, next.tenant, next, next.waiting.length > 0);
      clearTimeout(waiter.timer);
      next.serving++;
      this.#serving++;
      waiter.admit();
    }
  }
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
    this.lines.leave(this.line, servedMs, measured);
  }
}
