/** What a run of background work logs its failures with (a pino logger, Fastify's). */
interface FailureLog {
  error(details: object, message: string): void;
}

/**
 * Background work an instance runs in steps and resumes after a failure or a restart (a removal
 * of custom values, a move of leads): every run under way, tried again `retryMs` after a failure,
 * and stopped after the steps under way. What a run has done is kept in the database by the run
 * itself, so that a run tried again, or resumed at the next start, goes on from there.
 */
export class BackgroundRuns {
  readonly #running = new Set<Promise<unknown>>();
  readonly #retries = new Set<NodeJS.Timeout>();
  #stopping = false;

  constructor(
    private readonly log: FailureLog,
    /** What the runs do, for the log: `custom field values: removal`. */
    private readonly what: string,
    private readonly retryMs: number,
  ) {}

  /** Set once `stop` was called: a run checks it between steps. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Runs `run`; resolves when it ends, or when it failed (it is tried again later). */
  start(details: object, run: () => Promise<void>): Promise<void> {
    const running = run().catch((error: unknown) => {
      this.log.error({ err: error, ...details }, `${this.what} failed; trying again`);
      this.#retryLater(details, run);
    });
    this.#running.add(running);
    void running.finally(() => this.#running.delete(running));
    return running;
  }

  /** Stops after the steps under way: what is left resumes at the next start. */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const timer of this.#retries) clearTimeout(timer);
    await Promise.allSettled([...this.#running]);
  }

  #retryLater(details: object, run: () => Promise<void>): void {
    if (this.#stopping) return;
    const timer = setTimeout(() => {
      this.#retries.delete(timer);
      void this.start(details, run);
    }, this.retryMs);
    timer.unref();
    this.#retries.add(timer);
  }
}
