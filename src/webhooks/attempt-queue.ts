import type { Db } from '../db/database.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { JobWorker } from '../jobs/job-worker.js';

/** One attempt at one delivery (SPEC §15): the queue holds one job per attempt. */
export interface AttemptJob {
  readonly deliveryId: string;
  readonly tenantId: string;
  /** 1 for the first attempt; a job whose attempt was already made is a duplicate. */
  readonly attempt: number;
}

export const ATTEMPT_QUEUE = 'funil-webhook-attempt';
/**
 * How long an attempt belongs to the job that claimed it (a duplicate job, another id, finds it
 * taken). The same job, offered again once it expired with its instance (EXPIRE_SECONDS, noticed
 * within pg-boss's maintenance interval, then RETRY_DELAY_SECONDS later), takes its claim back at
 * once; a claim that outlives its job (every retry of the job spent) lapses, and the overdue sweep
 * of the dispatcher gives the delivery a new job.
 */
export const CLAIM_SECONDS = 60;
const EXPIRE_SECONDS = 20;
const RETRY_DELAY_SECONDS = 5;
/**
 * Attempts made at once by one instance (each mostly waits on its target). Those fetched together
 * claim and record together (WebhookWorker), so more at once costs few more statements: at 20,
 * deliveries fell behind a full create load (0.3× its rate, p99 11 s; bench/webhooks.ts).
 */
const CONCURRENCY = 100;

type Attempt = (job: AttemptJob & { jobId: string }) => Promise<void>;

/**
 * The webhook attempts on the job queue (jobs/job-queue.ts). Jobs are added inside the
 * transaction that makes their delivery or records the attempt before them (`enqueue(trx, …)`), so
 * a delivery and its next attempt commit together or not at all.
 */
export class AttemptQueue {
  #worker: JobWorker<AttemptJob> | undefined;

  constructor(private readonly jobs: JobQueue) {}

  /** Resolves once the queue is open (JobQueue.ready). */
  ready(): Promise<void> {
    return this.jobs.ready();
  }

  /** Works the attempts, `CONCURRENCY` at a time; `then` runs once the queue is open. */
  work(attempt: Attempt, then: () => void): void {
    this.#worker = this.jobs.worker<AttemptJob>(ATTEMPT_QUEUE, CONCURRENCY, (data, job) =>
      attempt({ ...data, jobId: job.id }),
    );
    this.#worker.start(then);
  }

  /** Adds attempts inside the transaction (or on the database) `handle` names; the queue must be ready. */
  enqueue(handle: Db, jobs: readonly (AttemptJob & { startAfter?: Date })[]): Promise<void> {
    return this.jobs.insert(
      handle,
      ATTEMPT_QUEUE,
      jobs.map(({ startAfter, ...data }) => ({
        data,
        startAfter,
        expireInSeconds: EXPIRE_SECONDS,
        // pg-boss's own retries only stand in for an attempt lost with its instance or its database.
        retryLimit: 5,
        retryDelay: RETRY_DELAY_SECONDS,
      })),
    );
  }

  /** Fetches at once, instead of at the next poll: jobs were just added. */
  wake(): void {
    this.#worker?.wake();
  }
}
