import { RecentTimes } from '../shared/recent-times.js';

/** Read as pg-pool's own timeout is (`isDatabaseUnavailable`): a 503. */
export class ConnectionWaitTimeout extends Error {
  constructor() {
    super('timeout exceeded when trying to connect: the request spent its wait for a database connection');
    this.name = 'ConnectionWaitTimeout';
  }
}

interface Waiter {
  readonly party: string;
  readonly admit: () => void;
  readonly timer: NodeJS.Timeout;
}

const ADMITTED = Promise.resolve();
/** How many of the latest checkouts the typical hold of a connection is read from. */
const HOLDS_KEPT = 32;

/**
 * After a party's turn, in `turns` (a Map taking turns in its insertion order): to the back while
 * it still has someone waiting, else out. The only party in turn stays where it is: a delete and a
 * set on every turn left a Map's table behind to be collected (W4's heap profile, issue 46).
 */
export function passTurn<K, V>(turns: Map<K, V>, party: K, line: V, stillWaiting: boolean): void {
  if (!stillWaiting) turns.delete(party);
  else if (turns.size > 1) {
    turns.delete(party);
    turns.set(party, line);
  }
}

/**
 * How many turns come before a newcomer of a party with `own` already waiting, when the parties
 * take turns one each: its own and one more, and of each other party waiting (`others`, their
 * lengths) as many, or all it has when fewer.
 */
export function turnsBefore(own: number, others: Iterable<number>): number {
  let turns = own + 1;
  for (const waiting of others) turns += Math.min(waiting, own + 1);
  return turns;
}

/**
 * Who takes the next free database connection (SPEC §10, fair share): the tenants waiting for one
 * take turns, one connection each, rather than queueing in the order they asked. A tenant with
 * several queries waiting (up to its share of concurrent requests) goes behind every other tenant
 * waiting once it has had its turn, so a quiet tenant waits for at most one query of each other
 * tenant, not for a flooder's whole share. On the embedded database, where one connection serves
 * every tenant, that is the difference between waiting for one expensive list and for four. (Until
 * a request knows its tenant, it waits in its token's line: connection-wait.ts.)
 *
 * As many places as the pool has connections; every checkout takes one and gives it back on release.
 */
export class ConnectionQueue {
  #free: number;
  /** Each waiting party's line, in the order their turns come (a Map keeps insertion order). */
  readonly #lines = new Map<string, Waiter[]>();
  #waiting = 0;
  readonly #holds = new RecentTimes(HOLDS_KEPT);

  /**
   * `maxHoldSampleMs`: a hold longer than any request may wait for a connection (the database
   * stalled, then woke) is counted as that long: it says that the database was away, not how long
   * a query holds a connection, and would otherwise turn the waits after an outage into refusals.
   */
  constructor(
    private readonly places: number,
    private readonly maxHoldSampleMs = Number.POSITIVE_INFINITY,
  ) {
    this.#free = places;
  }

  /**
   * How long a new checkout of `party` would wait, by the turns: before it, each party waiting takes
   * as many places as `party` has waiting, plus one (a party with fewer, all of its own), each held
   * for the recent typical time, `places` at a time. 0 while a place is free and nobody waits.
   */
  expectedWaitMs(party: string): number {
    if (this.#waiting === 0 && this.#free > 0) return 0;
    const holdMs = this.#holds.median();
    if (Number.isNaN(holdMs)) return 0;
    const own = this.#lines.get(party)?.length ?? 0;
    const others = [...this.#lines].filter(([other]) => other !== party).map(([, line]) => line.length);
    return (turnsBefore(own, others) * holdMs) / this.places;
  }

  /** How many checkouts wait for a place. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Takes a place if one is free and nobody waits for one: what `enter` does at once when it can. */
  tryEnter(): boolean {
    if (this.#free > 0 && this.#waiting === 0) {
      this.#free--;
      return true;
    }
    return false;
  }

  /**
   * Resolves when `party` (a tenant, a token being looked up, '' for work of neither) may take a
   * connection, or rejects with ConnectionWaitTimeout after `waitMs`, its place in the line given up.
   */
  enter(party: string, waitMs: number): Promise<void> {
    if (this.tryEnter()) return ADMITTED;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        party,
        admit: resolve,
        timer: setTimeout(() => {
          this.#withdraw(waiter);
          reject(new ConnectionWaitTimeout());
        }, waitMs),
      };
      const line = this.#lines.get(party);
      if (line) line.push(waiter);
      else this.#lines.set(party, [waiter]);
      this.#waiting++;
    });
  }

  /** Gives a place back, held `heldMs` (when measured): to the party whose turn it is, else to the free places. */
  leave(heldMs?: number): void {
    if (heldMs !== undefined) this.#holds.add(Math.min(heldMs, this.maxHoldSampleMs));
    // Nobody waiting, as is usual below capacity: no iterator to make.
    const turn = this.#waiting === 0 ? undefined : this.#lines.entries().next();
    if (turn === undefined || turn.done) {
      this.#free++;
      return;
    }
    const [party, line] = turn.value;
    const waiter = line.shift() as Waiter;
    passTurn(this.#lines, party, line, line.length > 0);
    this.#waiting--;
    clearTimeout(waiter.timer);
    waiter.admit();
  }

  #withdraw(waiter: Waiter): void {
    const line = this.#lines.get(waiter.party);
    const at = line?.indexOf(waiter) ?? -1;
    if (!line || at < 0) return;
    line.splice(at, 1);
    if (line.length === 0) this.#lines.delete(waiter.party);
    this.#waiting--;
  }
}
