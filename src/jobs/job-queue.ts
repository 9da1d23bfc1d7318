import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger as Logger } from 'fastify';
import { CompiledQuery, sql } from 'kysely';
import PgBoss from 'pg-boss';
import type { Database, Db } from '../db/database.js';
import { isMadeConcurrently } from '../db/errors.js';
import { settledWithin } from '../shared/settled-within.js';
import { type JobHandler, JobWorker } from './job-worker.js';

/** One job to add: its queue, its data, and how pg-boss is to treat it. */
export interface NewJob<T extends object> {
  readonly data: T;
  readonly startAfter?: Date | undefined;
  /** How long the job belongs to the instance that fetched it; then it is offered again. */
  readonly expireInSeconds: number;
  readonly retryLimit: number;
  readonly retryDelay: number;
}

const MAINTENANCE_SECONDS = 10;
/** pg-boss's schema in Funil's database (its tables were installed there by a migration). */
const SCHEMA = 'pgboss';

/**
 * The job queue of SPEC §15: pg-boss, keeping its jobs in Funil's database (the `pgboss` schema,
 * installed by a migration), one per instance for every queue (webhook attempts, import chunks). On
 * PostgreSQL it opens a small pool of its own; on PGlite, where there is one connection, it goes
 * through Funil's pool. Jobs are added inside the transaction that makes them due (`insert(trx, …)`),
 * so a job and the change that calls for it commit together or not at all. Each job is fetched by
 * one instance (`for update skip locked`); a job whose instance died expires and is fetched again.
 */
export class JobQueue {
  readonly #boss: PgBoss;
  readonly #database: Database;
  readonly #queues: readonly string[];
  readonly #workers = new Set<JobWorker<never>>();
  #started: Promise<void> | undefined;

  /** `supervise`: this instance also runs pg-boss's maintenance (expiry, deletion). */
  constructor(
    database: Database,
    databaseUrl: string | undefined,
    supervise: boolean,
    private readonly logger: Logger,
    queues: readonly string[],
  ) {
    const connection: PgBoss.DatabaseOptions =
      database.backend === 'postgres' && databaseUrl
        ? { connectionString: databaseUrl, max: 3, application_name: 'funil-jobs' }
        : { db: executorOf(database.db) };
    this.#database = database;
    this.#queues = queues;
    this.#boss = new PgBoss({
      ...connection,
      schema: SCHEMA,
      migrate: true,
      supervise,
      schedule: false,
      maintenanceIntervalSeconds: MAINTENANCE_SECONDS,
      // Funil's own tables keep what the jobs did: finished jobs go early (pg-boss's tables grow otherwise).
      archiveCompletedAfterSeconds: 60,
      archiveFailedAfterSeconds: 3_600,
      deleteAfterSeconds: 3_600,
    });
    this.#boss.on('error', (error) => logger.warn({ err: error }, 'job queue error'));
  }

  /**
   * Resolves once the queue is open; opens it on first call. Call it before a transaction that
   * inserts: on PGlite, opening needs the one connection such a transaction would hold.
   */
  ready(): Promise<void> {
    this.#started ??= this.#open().catch((error: unknown) => {
      this.#started = undefined;
      throw error;
    });
    return this.#started;
  }

  /** Adds jobs to `queue` inside the transaction (or on the database) `handle` names; the queue must be ready. */
  async insert<T extends object>(handle: Db, queue: string, jobs: readonly NewJob<T>[]): Promise<void> {
    if (jobs.length === 0) return;
    if (!this.#started) throw new Error('JobQueue.insert before ready()');
    await this.#started;
    await this.#boss.insert(
      jobs.map((job) => ({ name: queue, ...job })),
      { db: executorOf(handle) },
    );
  }

  /** A worker of `queue`'s jobs, `concurrency` at a time, started by its `start`. */
  worker<T extends object>(queue: string, concurrency: number, handler: JobHandler<T>): JobWorker<T> {
    const worker = new JobWorker<T>(this.#boss, this, queue, concurrency, handler, this.logger);
    this.#workers.add(worker as unknown as JobWorker<never>);
    return worker;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#workers].map((worker) => worker.stop()));
    const started = await this.#started?.then(
      () => true,
      () => false,
    );
    if (!started) return;
    // SPEC §12: the process ends within 10 s, even with the database not answering.
    const stopping = this.#boss.stop({ graceful: true, timeout: 2_000, wait: true }).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'job queue did not stop cleanly');
    });
    await settledWithin(stopping, 3_000);
  }

  async #open(): Promise<void> {
    await this.#boss.start();
    for (const queue of this.#queues) await this.#ensureQueue(queue);
    if (this.#database.backend === 'pglite') await this.#offerOrphansAgain();
  }

  /**
   * The embedded database has one process (its data directory is locked): a job still active when
   * the queue opens was fetched by a process that ended without finishing it (kill -9, a crash).
   * Failed now, pg-boss offers it again after its retry delay, not after its expiry, its
   * maintenance's notice of that and the delay (about 30 s). On PostgreSQL another instance may be
   * working it: there its expiry stays the only way back.
   */
  async #offerOrphansAgain(): Promise<void> {
    for (const queue of this.#queues) {
      const { rows } = await sql<{ id: string }>`
        select id from ${sql.table(`${SCHEMA}.job`)} where name = ${queue} and state = 'active'`.execute(
        this.#database.db,
      );
      if (rows.length === 0) continue;
      await this.#boss.fail(
        queue,
        rows.map((row) => row.id),
      );
      this.logger.info({ queue, jobs: rows.length }, 'jobs of a process that ended offered again');
    }
  }

  /**
   * Makes `queue` unless it is made. Instances starting at once on a new database each make it, and
   * PostgreSQL ends all but one in a deadlock (or a duplicate): those look again, and find it made.
   */
  async #ensureQueue(queue: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (await this.#boss.getQueue(queue)) return;
      try {
        await this.#boss.createQueue(queue);
        return;
      } catch (error) {
        if (attempt >= CREATE_ATTEMPTS || !isMadeConcurrently(error)) throw error;
        await sleep(Math.random() * 50 * attempt);
      }
    }
  }
}

/** How often a queue's making is tried while other instances make it too. */
const CREATE_ATTEMPTS = 5;

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
