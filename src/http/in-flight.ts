/** Something kept in an InFlight: where it is, -1 while out. */
export interface Slotted {
  slot: number;
}

/**
 * The requests in flight (their request-deadline clocks), in an array: one leaves by the last taking
 * its slot. Not a Set: under W4's load (32 connections, GET /customers/:id) a Set here kept finished
 * requests alive through V8's young collections, to be promoted to the old generation (~700 KB a
 * scavenge, a Mark-Compact every ~0.4 s); with the array, ~100 KB a scavenge and a fifth less CPU a
 * request (bench/results/profile-notes.md). The likely cause: the tables a Set leaves behind as it
 * grows and shrinks, once old, still point at what they held, and a young collection takes every
 * pointer from the old generation as live.
 */
export class InFlight<T extends Slotted> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  add(item: T): void {
    item.slot = this.#items.length;
    this.#items.push(item);
  }

  /** Takes `item` out; nothing if it is not in. */
  remove(item: T): void {
    if (item.slot < 0 || this.#items[item.slot] !== item) return;
    const last = this.#items.pop() as T;
    if (last !== item) {
      this.#items[item.slot] = last;
      last.slot = item.slot;
    }
    item.slot = -1;
  }

  /** Each item in flight, once; `visit` may remove the one it is given. */
  forEach(visit: (item: T) => void): void {
    // From the end: a removal moves the last item, already visited, into the freed slot.
    for (let i = this.#items.length - 1; i >= 0; i--) {
      const item = this.#items[i];
      if (item !== undefined) visit(item);
    }
  }
}
