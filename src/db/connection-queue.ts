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

  constructor(places: number) {
    this.#free = places;
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

  /** Gives a place back: to the party whose turn it is, else to the free places. */
  leave(): void {
    // Nobody waiting, as is usual below capacity: no iterator to make.
    const turn = this.#waiting === 0 ? undefined : this.#lines.entries().next();
    if (turn === undefined || turn.done) {
      this.#free++;
      return;
    }
    const [party, line] = turn.value;
    const waiter = line.shift() as Waiter;
    // To the back of the turns, behind every other party waiting, or out when its line is empty.
    this.#lines.delete(party);
    if (line.length > 0) this.#lines.set(party, line);
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
