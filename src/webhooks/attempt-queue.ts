import type { FastifyBaseLogger as Logger } from 'fastify';
import { CompiledQuery } from 'kysely';
import PgBoss from 'pg-boss';
import type { Database, Db } from '../db/database.js';

/** One attempt at one delivery (SPEC §15): the queue holds one job per attempt. */
export interface AttemptJob {
  readonly deliveryId: string;
  readonly tenantId: string;
  /** 1 for the first attempt; a job whose attempt was already made is a duplicate. */
  readonly attempt: number;
}

const QUEUE = 'funil-webhook-attempt';
/**
 * How long an attempt belongs to the job that claimed it (a duplicate job, another id, finds it
 * taken). The same job, offered again once it expired with its instance (EXPIRE_SECONDS, noticed
 * within MAINTENANCE_SECONDS, then RETRY_DELAY_SECONDS later), takes its claim back at once; a
 * claim that outlives its job (every retry of the job spent) lapses, and the overdue sweep of the
 * dispatcher gives the delivery a new job.
 */
export const CLAIM_SECONDS = 60;
const EXPIRE_SECONDS = 20;
const MAINTENANCE_SECONDS = 10;
const RETRY_DELAY_SECONDS = 5;
/** Attempts made at once by one instance (each mostly waits on its target). */
const CONCURRENCY = 20;
/** How often free slots look for due jobs when nothing wakes them. */
const POLL_MS = 1_000;

type Attempt = (job: AttemptJob & { jobId: string }) => Promise<void>;

/**
 * The webhook attempts' job queue: pg-boss, keeping its jobs in Funil's database (the `pgboss`
 * schema, installed by a migration). On PostgreSQL it opens a small pool of its own; on PGlite, where
 * there is one connection, it goes through Funil's pool. Jobs are added inside the transaction
 * that makes their delivery or records the attempt before them (`enqueue(trx, …)`), so a delivery
 * and its next attempt commit together or not at all. Each job is fetched by one instance
 * (`for update skip locked`); a job whose instance died expires and is fetched again.
 */
export class AttemptQueue {
  readonly #boss: PgBoss;
  #started: Promise<void> | undefined;
  #attempt: Attempt | undefined;
  #poll: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #stopped = false;
  /** The attempts under way, one slot each. */
  readonly #inFlight = new Set<Promise<void>>();
  #filling = false;
  #fillAgain = false;
  #fillScheduled = false;

  /** `deliver`: this instance also runs pg-boss's maintenance (expiry, deletion) and works the jobs. */
  constructor(
    database: Database,
    databaseUrl: string | undefined,
    deliver: boolean,
    private readonly logger: Logger,
  ) {
    const connection: PgBoss.DatabaseOptions =
      database.backend === 'postgres' && databaseUrl
        ? { connectionString: databaseUrl, max: 3, application_name: 'funil-webhooks' }
        : { db: executorOf(database.db) };
    this.#boss = new PgBoss({
      ...connection,
      schema: 'pgboss',
      migrate: true,
      supervise: deliver,
      schedule: false,
      maintenanceIntervalSeconds: MAINTENANCE_SECONDS,
      // Funil's own table keeps the delivery log: finished jobs go early (pg-boss's tables grow otherwise).
      archiveCompletedAfterSeconds: 60,
      archiveFailedAfterSeconds: 3_600,
      deleteAfterSeconds: 3_600,
    });
    this.#boss.on('error', (error) => logger.warn({ err: error }, 'webhook queue error'));
  }

  /**
   * Resolves once the queue is open; opens it on first call. Call it before a transaction that
   * enqueues: on PGlite, opening needs the one connection such a transaction would hold.
   */
  ready(): Promise<void> {
    this.#started ??= this.#open().catch((error: unknown) => {
      this.#started = undefined;
      throw error;
    });
    return this.#started;
  }

  /**
   * Opens the queue and works its jobs, `CONCURRENCY` at a time; while the database is away, tries
   * again every few seconds. Each attempt settles its own job and frees its own slot, which is
   * filled again at once (SPEC §15, isolation: an endpoint that hangs for its whole timeout holds
   * one slot, never the attempts beside it, as a batch awaited whole did).
   */
  work(attempt: Attempt, then: () => void): void {
    this.ready().then(
      () => {
        if (this.#stopped) return;
        this.#attempt = attempt;
        this.#poll = setInterval(() => void this.#fill(), POLL_MS);
        this.#poll.unref();
        void this.#fill();
        then();
      },
      (error: unknown) => {
        if (this.#stopped) return;
        this.logger.warn({ err: error }, 'webhook queue not open yet: trying again in 5 s');
        this.#retry = setTimeout(() => this.work(attempt, then), 5_000);
        this.#retry.unref();
      },
    );
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
        while (!this.#stopped && this.#inFlight.size < CONCURRENCY) {
          const jobs = await this.#boss.fetch<AttemptJob>(QUEUE, { batchSize: CONCURRENCY - this.#inFlight.size });
          if (jobs.length === 0) break;
          for (const job of jobs) this.#run(job);
        }
      } while (this.#fillAgain && !this.#stopped);
    } catch (error) {
      this.logger.warn({ err: error }, 'could not fetch webhook attempts');
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

  #run(job: PgBoss.Job<AttemptJob>): void {
    const attempt = this.#attempt as Attempt;
    const running: Promise<void> = attempt({ ...job.data, jobId: job.id })
      .then(
        () => this.#boss.complete(QUEUE, job.id),
        async (error: unknown) => {
          // Failed here first (the database away): pg-boss offers it again, and its claim is taken back.
          this.logger.warn({ err: error, deliveryId: job.data.deliveryId }, 'webhook attempt failed');
          await this.#boss.fail(QUEUE, job.id, { message: String(error) });
        },
      )
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not settle a webhook attempt job'))
      .finally(() => {
        this.#inFlight.delete(running);
        this.#fillSoon();
      });
    this.#inFlight.add(running);
  }

  /** Adds attempts inside the transaction (or on the database) `handle` names; the queue must be ready. */
  async enqueue(handle: Db, jobs: readonly (AttemptJob & { startAfter?: Date })[]): Promise<void> {
    if (jobs.length === 0) return;
    if (!this.#started) throw new Error('AttemptQueue.enqueue before ready()');
    await this.#started;
    await this.#boss.insert(
      jobs.map(({ startAfter, ...data }) => ({
        name: QUEUE,
        data,
        startAfter,
        expireInSeconds: EXPIRE_SECONDS,
        // pg-boss's own retries only stand in for an attempt lost with its instance or its database.
        retryLimit: 5,
        retryDelay: RETRY_DELAY_SECONDS,
      })),
      { db: executorOf(handle) },
    );
  }

  /** Fetches at once, instead of at the next poll: jobs were just added. */
  wake(): void {
    if (this.#attempt) this.#fillSoon();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearInterval(this.#poll);
    // The attempts under way end, or their jobs expire and another instance makes them.
    await settledWithin(Promise.allSettled([...this.#inFlight]), 2_000);
    const started = await this.#started?.then(
      () => true,
      () => false,
    );
    if (!started) return;
    // SPEC §12: the process ends within 10 s, even with the database not answering.
    const stopping = this.#boss.stop({ graceful: true, timeout: 2_000, wait: true }).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'webhook queue did not stop cleanly');
    });
    await settledWithin(stopping, 3_000);
  }

  async #open(): Promise<void> {
    await this.#boss.start();
    if (!(await this.#boss.getQueue(QUEUE))) await this.#boss.createQueue(QUEUE);
  }
}

/** pg-boss's way in to a connection: Funil's pool, or an open transaction on it; rows as PostgreSQL names them. */
function executorOf(handle: Db): PgBoss.Db {
  const raw = handle.withoutPlugins();
  return {
    async executeSql(text, values) {
      const result = await raw.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows as unknown[] as never[] };
    },
  };
}

/** Waits for `promise` to settle, or `ms`, whichever comes first. */
export async function settledWithin(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise?.catch(() => undefined), timeout]);
  clearTimeout(timer);
}
