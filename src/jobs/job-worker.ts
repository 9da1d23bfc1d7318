import type { FastifyBaseLogger as Logger } from 'fastify';
import type PgBoss from 'pg-boss';
import { settledWithin } from '../shared/settled-within.js';
import { TickBatch } from '../shared/tick-batch.js';

/** One job as its handler sees it: its id, and whether a failure now is its last (its retries are spent). */
export interface JobAttempt {
  readonly id: string;
  readonly lastTry: boolean;
}

/** What a worker does with one job; a rejection fails the job, which pg-boss offers again (its retries). */
export type JobHandler<T> = (data: T, job: JobAttempt) => Promise<void>;

/** How often free slots look for due jobs when nothing wakes them. */
const POLL_MS = 1_000;

/** Where a worker's queue is opened (JobQueue.ready). */
interface Opener {
  ready(): Promise<void>;
}

/**
 * Works one queue's jobs, `concurrency` at a time; while the database is away, tries to open the
 * queue again every few seconds. Each job settles its own job and frees its own slot, which is
 * filled again at once (SPEC §15, isolation: an endpoint that hangs for its whole timeout holds
 * one slot, never the attempts beside it, as a batch awaited whole did).
 */
export class JobWorker<T extends object> {
  #poll: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #working = false;
  #stopped = false;
  /** The jobs under way, one slot each. */
  readonly #inFlight = new Set<Promise<void>>();
  #filling = false;
  #fillAgain = false;
  #fillScheduled = false;
  /** The jobs that end in one turn of the event loop are completed in one statement. */
  readonly #completions = new TickBatch<string, void>(async (ids) => {
    await this.boss.complete(this.queue, [...ids]);
    return ids.map(() => undefined);
  });

  constructor(
    private readonly boss: PgBoss,
    private readonly opener: Opener,
    private readonly queue: string,
    private readonly concurrency: number,
    private readonly handler: JobHandler<T>,
    private readonly logger: Logger,
  ) {}

  /** Opens the queue and works its jobs; `then` runs once it does. */
  start(then: () => void = () => undefined): void {
    this.opener.ready().then(
      () => {
        if (this.#stopped) return;
        this.#working = true;
        this.#poll = setInterval(() => void this.#fill(), POLL_MS);
        this.#poll.unref();
        void this.#fill();
        then();
      },
      (error: unknown) => {
        if (this.#stopped) return;
        this.logger.warn({ err: error, queue: this.queue }, 'job queue not open yet: trying again in 5 s');
        this.#retry = setTimeout(() => this.start(then), 5_000);
        this.#retry.unref();
      },
    );
  }

  /** Fetches at once, instead of at the next poll: jobs were just added. */
  wake(): void {
    if (this.#working) this.#fillSoon();
  }

  /** Stops taking jobs; the jobs under way end (or expire, and another instance does them). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearInterval(this.#poll);
    await settledWithin(Promise.allSettled([...this.#inFlight]), 2_000);
  }

  /** Takes due jobs while slots are free; asked again while it runs, it runs once more after. */
  async #fill(): Promise<void> {
    if (this.#filling) {
      this.#fillAgain = true;
      return;
    }
    this.#filling = true;
    try {
      do {
        this.#fillAgain = false;
        while (!this.#stopped && this.#inFlight.size < this.concurrency) {
          const jobs = await this.boss.fetch<T>(this.queue, {
            batchSize: this.concurrency - this.#inFlight.size,
            includeMetadata: true,
          });
          if (jobs.length === 0) break;
          for (const job of jobs) this.#run(job);
        }
      } while (this.#fillAgain && !this.#stopped);
    } catch (error) {
      this.logger.warn({ err: error, queue: this.queue }, 'could not fetch jobs');
    } finally {
      this.#filling = false;
    }
  }

  /** One fetch for the slots freed in one turn of the event loop, not one per slot. */
  #fillSoon(): void {
    if (this.#fillScheduled) return;
    this.#fillScheduled = true;
    setImmediate(() => {
      this.#fillScheduled = false;
      void this.#fill();
    });
  }

  #run(job: PgBoss.JobWithMetadata<T>): void {
    const running: Promise<void> = this.handler(job.data, { id: job.id, lastTry: job.retryCount >= job.retryLimit })
      .then(
        // A completion lost with the database expires, and the job is offered again (its handler
        // then finds its work made: a webhook attempt counts a duplicate and sends nothing).
        () => this.#completions.call(job.id),
        async (error: unknown) => {
          // Failed here first (the database away, say): pg-boss offers it again.
          this.logger.warn({ err: error, queue: this.queue, jobId: job.id }, 'job failed');
          await this.boss.fail(this.queue, job.id, { message: String(error) });
        },
      )
      .catch((error: unknown) => this.logger.warn({ err: error, queue: this.queue }, 'could not settle a job'))
      .finally(() => {
        this.#inFlight.delete(running);
        this.#fillSoon();
      });
    this.#inFlight.add(running);
  }
}
