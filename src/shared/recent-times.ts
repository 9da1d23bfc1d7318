/** Fewer samples than this say nothing typical: a cold start's first queries, a lone stall. */
const MIN_SAMPLES = 5;

/**
 * The last few durations of something (a tenant's requests, the database's checkouts), and their
 * median: a typical recent time that one stall (a garbage collection, a checkpoint) does not move,
 * where a moving average would jump and take many samples to settle. Until there are a few of
 * them, there is no median: the first times of a process (code compiled, caches filled, on a busy
 * machine) are many times the usual, and predicted from them an ordinary client's first burst
 * would be refused as too slow to serve.
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

  /** The median of the recent samples; NaN while there are fewer than a few. */
  median(): number {
    if (this.#median !== undefined) return this.#median;
    if (this.#samples.length < Math.min(MIN_SAMPLES, this.size)) return Number.NaN;
    const sorted = [...this.#samples].sort((a, b) => a - b);
    this.#median = sorted[sorted.length >> 1] as number;
    return this.#median;
  }
}
