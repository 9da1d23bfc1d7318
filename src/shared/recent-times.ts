/**
 * The last few durations of something (a tenant's requests, the database's checkouts), and their
 * median: a typical recent time that one stall (a garbage collection, a checkpoint) does not move,
 * where a moving average would jump and take many samples to settle.
 */
export class RecentTimes {
  readonly #samples: number[] = [];
  #next = 0;
  #median: number | undefined;

  constructor(private readonly size: number) {}

  add(ms: number): void {
    if (this.#samples.length < this.size) this.#samples.push(ms);
    else this.#samples[this.#next] = ms;
    this.#next = (this.#next + 1) % this.size;
    this.#median = undefined;
  }

  /** The median of the recent samples; NaN when there are none. */
  median(): number {
    if (this.#median !== undefined) return this.#median;
    if (this.#samples.length === 0) return Number.NaN;
    const sorted = [...this.#samples].sort((a, b) => a - b);
    this.#median = sorted[sorted.length >> 1] as number;
    return this.#median;
  }
}
