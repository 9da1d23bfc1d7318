import type { FastifyBaseLogger as Logger } from 'fastify';
import { sql } from 'kysely';
import type { Actor } from '../auth/caller.js';
import { WaitBudget } from '../db/connection-wait.js';
import type { Database, Db } from '../db/database.js';
import { inSavepoint, inTransaction } from '../db/transaction.js';
import type { ResourceCustomFields } from '../fields/custom-field-catalog.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { JobAttempt, JobWorker } from '../jobs/job-worker.js';
import type { Upserted, UpsertKey } from '../records/record.service.js';
import type { RowSnapshot } from '../records/record-merge.js';
import { ApiError } from '../shared/errors.js';
import { importMessages } from './import.messages.js';
import { type ImportedRecord, importRepository, type RowFault } from './import.repository.js';
import { IMPORT_LIMITS, type ImportResource } from './import.schemas.js';
import { faultsOf, type ImportRowReader } from './import-rows.js';

export const IMPORT_QUEUE = 'funil-import';

/**
 * An import's work: applying its next rows (wherever it has come to: two such jobs of one import
 * take turns, and the second finds the rows taken), or its revert's records after `after`.
 */
export type ImportJob =
  | { readonly tenantId: string; readonly importId: string; readonly step: 'rows' }
  | { readonly tenantId: string; readonly importId: string; readonly step: 'revert'; readonly after: string | null };

/** What an import writes its rows with: its resource's record service (the write path every request takes). */
export interface ImportWriter {
  batch(
    handle: Db,
    actor: Actor,
    inputs: readonly (object | ApiError)[],
    key?: UpsertKey,
  ): Promise<(Upserted<unknown> | ApiError)[]>;
  revertImported(
    trx: Db,
    actor: Actor,
    record: { id: string; version: number; created: boolean; columns: RowSnapshot },
  ): Promise<'deleted' | 'restored' | 'gone' | 'changed' | 'taken'>;
}

export interface ImportTarget {
  readonly writer: ImportWriter;
  readonly rows: ImportRowReader;
  readonly customFields: ResourceCustomFields;
}

/** Runs a tenant's work in its turn of the fair share (SPEC §10), as one of its requests. */
export type TenantTurn = <T>(tenantId: string, work: () => Promise<T>) => Promise<T>;

/** Import steps run at once by one instance: one per core of this machine's size, leaving the requests theirs. */
const CONCURRENCY = 2;
/** How long one job applies steps before it hands the rest to a new job. */
const JOB_BUDGET_MS = 2_000;
/** How often an import of an inactive tenant looks whether it is active again. */
const INACTIVE_RECHECK_MS = 5_000;
/** Records a revert step puts back in one transaction. */
const REVERT_STEP = 1_000;
/** How long a step may wait for its connections (a chunk is work of no request: no 5 s answer to keep). */
const STEP_WAIT_MS = 60_000;
/** A step takes a second or two: one still held after a minute is taken as lost with its instance. */
const JOB_OPTIONS = { expireInSeconds: 60, retryLimit: 10, retryDelay: 5, retryBackoff: true } as const;

/** Thrown in a dry run's savepoint to roll back what its rows wrote, with what they would have done. */
class DryRun extends Error {
  constructor(readonly outcomes: (Upserted<unknown> | ApiError)[]) {
    super('dry run');
  }
}

/**
 * SPEC §23's import steps on the job queue (jobs/job-queue.ts). A chunk's rows are applied in one
 * transaction that also moves the import to its next chunk and adds that chunk's job: a job offered
 * twice (its instance died after the commit) finds its chunk done and does nothing, one whose
 * instance died before the commit is done again from nothing. So each row is applied once. Each
 * step takes its tenant's turn (its connections wait in the tenant's line) and the next step is a
 * new job: between chunks, every other request goes first.
 */
export class ImportJobs {
  #worker: JobWorker<ImportJob> | undefined;

  constructor(
    private readonly database: Database,
    private readonly queue: JobQueue,
    private readonly targets: Readonly<Record<ImportResource, ImportTarget>>,
    private readonly logger: Logger,
    private readonly turn: TenantTurn = (_tenant, work) => work(),
    /** Rows the next step applies in one transaction: at most a stored chunk's 1,000 (SPEC §23). */
    private readonly rowsPerStep: number = IMPORT_LIMITS.chunkRows,
  ) {}

  /**
   * Works the import jobs on this instance from its first import, or at start when imports are
   * under way (an instance that died left them: their steps are added again, and a step done
   * already is found done). An instance with no import polls for none.
   */
  async resumeAll(): Promise<void> {
    const unfinished = await importRepository.underWay(this.database.db);
    if (unfinished.length === 0) return;
    await this.ready();
    for (const job of unfinished) {
      const step: ImportJob =
        job.revertStatus === 'running'
          ? { tenantId: job.tenantId, importId: job.id, step: 'revert', after: job.revertAfter }
          : { tenantId: job.tenantId, importId: job.id, step: 'rows' };
      await this.add(this.database.db, step);
    }
    this.wake();
  }

  /** Resolves once jobs may be added (on PGlite, before a transaction takes the one connection). */
  ready(): Promise<void> {
    return this.queue.ready();
  }

  /** Adds `job` in the transaction `trx` (call `ready` first), due at once or `startAfter`; `wake` once it commits. */
  add(trx: Db, job: ImportJob, startAfter?: Date): Promise<void> {
    return this.queue.insert(trx, IMPORT_QUEUE, [{ data: job, startAfter, ...JOB_OPTIONS }]);
  }

  /** Looks for jobs at once (they were just added), working them from now on. */
  wake(): void {
    if (this.#worker === undefined) {
      this.#worker = this.queue.worker<ImportJob>(IMPORT_QUEUE, CONCURRENCY, (job, attempt) => this.#run(job, attempt));
      this.#worker.start();
    }
    this.#worker.wake();
  }

  async #run(job: ImportJob, attempt: JobAttempt): Promise<void> {
    try {
      if (job.step === 'revert') {
        if (await this.turn(job.tenantId, () => this.#revert(job.tenantId, job.importId, job.after))) this.wake();
        return;
      }
      // Steps one after the other, each in its own turn and transaction, for JOB_BUDGET_MS; then
      // the last one hands the rest to a new job (another instance may take it).
      const started = performance.now();
      for (;;) {
        const handOff = performance.now() - started > JOB_BUDGET_MS;
        const more = await this.turn(job.tenantId, () => this.#rows(job.tenantId, job.importId, handOff));
        if (!more) return;
        if (handOff) return this.wake();
        // Between steps, whatever else waits on this process goes first.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      // Tried as often as pg-boss will: the import ends as failed rather than waiting for ever.
      if (attempt.lastTry && job.step === 'rows') {
        this.logger.error({ err: error, importId: job.importId }, 'import chunk failed for good: import failed');
        await importRepository.fail(this.database.db, job.tenantId, job.importId);
      }
      throw error;
    }
  }

  /** A handle whose connections wait in the tenant's turn (db/connection-queue.ts). */
  #handleOf(tenantId: string): Db {
    const budget = new WaitBudget(STEP_WAIT_MS);
    budget.party = tenantId;
    return this.database.within(budget);
  }

  /**
   * Applies the import's next rows (at most `rowsPerStep`, within one stored chunk); true when
   * rows are left. `handOff`: the step also adds the job that goes on from there.
   */
  async #rows(tenantId: string, importId: string, handOff: boolean): Promise<boolean> {
    const handle = this.#handleOf(tenantId);
    const { chunkRows } = IMPORT_LIMITS;
    if (handOff) await this.ready();
    return inTransaction(handle, async (trx) => {
      // The claim is the check: no rows left, the import over (cancelled), or its token lapsed, takes none.
      const job = await importRepository.claim(trx, tenantId, importId, this.rowsPerStep, chunkRows);
      if (!job) {
        if (await importRepository.cancelIfTokenLapsed(trx, tenantId, importId)) return false;
        // Its tenant deactivated: the import waits, and looks again in a while.
        if (await importRepository.waitsForTenant(trx, tenantId, importId)) {
          await this.add(trx, { tenantId, importId, step: 'rows' }, new Date(Date.now() + INACTIVE_RECHECK_MS));
        }
        return false;
      }
      const target = this.targets[job.resource];
      const { from, count } = job;
      // Read once the import is held: an erasure (SPEC §17) rewrites chunks holding it too.
      const chunk = await importRepository.rowsOf(trx, importId, Math.floor(from / chunkRows), from % chunkRows, count);
      // Rolled back, not skipped: rows claimed are applied or the claim never happened.
      if (!chunk) throw new Error(`import ${importId}: chunk of row ${from} missing`);
      const actor: Actor = { tenantId, tokenId: job.tokenId as string, requestId: `import:${importId}` };
      const custom = await target.customFields.of(trx, tenantId);
      const inputs = target.rows.inputs(job, custom, chunk.rows);
      const key = job.upsert ?? undefined;
      const outcomes = job.dryRun
        ? await dryRun(trx, () => target.writer.batch(trx, actor, inputs, key))
        : await target.writer.batch(trx, actor, inputs, key);
      const faults: RowFault[] = [];
      const records: ImportedRecord[] = [];
      let created = 0;
      outcomes.forEach((outcome, index) => {
        const row = chunk.firstRow + index;
        if (outcome instanceof ApiError) {
          faults.push(...faultsOf(row, outcome));
          return;
        }
        if (outcome.created) created++;
        const { object, version } = outcome.stored as { object: { _id: string }; version: number };
        records.push({ recordId: object._id, row, created: outcome.created, version });
      });
      const failed = outcomes.filter((outcome) => outcome instanceof ApiError).length;
      await importRepository.addFaults(trx, importId, 'import', faults);
      if (!job.dryRun) await importRepository.addRecords(trx, importId, records);
      const last = from + count >= job.total;
      const counts = { processed: outcomes.length, created, updated: outcomes.length - failed - created, failed };
      await importRepository.progress(trx, tenantId, importId, counts, last);
      if (last) await importRepository.dropChunks(trx, importId);
      else if (handOff) await this.add(trx, { tenantId, importId, step: 'rows' });
      return !last;
    });
  }

  /** Reverts the import's next records after `after`; true when another step follows. */
  async #revert(tenantId: string, importId: string, after: string | null): Promise<boolean> {
    const handle = this.#handleOf(tenantId);
    const found = await importRepository.find(handle, tenantId, importId);
    if (found?.revertStatus !== 'running' || found.revertAfter !== after) return false;
    const target = this.targets[found.resource];
    await this.ready();
    return inTransaction(handle, async (trx) => {
      const records = await importRepository.recordsAfter(trx, importId, after, REVERT_STEP);
      const next = records.length === REVERT_STEP ? (records.at(-1) as ImportedRecord).recordId : null;
      const counts = { deleted: 0, restored: 0, skipped: 0 };
      const before = await formerValues(trx, tenantId, importId, records);
      const actor: Actor = { tenantId, tokenId: found.tokenId as string, requestId: `revert:${importId}` };
      const faults: RowFault[] = [];
      for (const record of records) {
        const outcome = await target.writer.revertImported(trx, actor, {
          id: record.recordId,
          version: record.version,
          created: record.created,
          columns: before.get(record.recordId) ?? {},
        });
        if (outcome === 'deleted') counts.deleted++;
        else if (outcome === 'restored') counts.restored++;
        else {
          counts.skipped++;
          const message = outcome === 'gone' ? importMessages.deletedSince : importMessages.changedSince;
          faults.push({ row: record.row, field: null, code: 'conflict', message, recordId: record.recordId });
        }
      }
      const step = await importRepository.revertStep(trx, tenantId, importId, after, next, counts);
      if (!step) throw new StepTaken();
      await importRepository.addFaults(trx, importId, 'revert', faults);
      if (next !== null) await this.add(trx, { tenantId, importId, step: 'revert', after: next });
      return next !== null;
    }).catch((error: unknown) => {
      if (error instanceof StepTaken) return false;
      throw error;
    });
  }
}

/** Another job did this revert step first: roll back, and do nothing. */
class StepTaken extends Error {}

async function dryRun(
  trx: Db,
  work: () => Promise<(Upserted<unknown> | ApiError)[]>,
): Promise<(Upserted<unknown> | ApiError)[]> {
  try {
    await inSavepoint(trx, async () => {
      throw new DryRun(await work());
    });
  } catch (error) {
    if (error instanceof DryRun) return error.outcomes;
    throw error;
  }
  throw new Error('unreachable');
}

/**
 * What each record was before the import, from its events (SPEC §14): for each column the import
 * changed, the value it had before the import's first change of it (a created record needs none).
 */
async function formerValues(
  trx: Db,
  tenantId: string,
  importId: string,
  records: readonly ImportedRecord[],
): Promise<Map<string, RowSnapshot>> {
  const updated = records.filter((record) => !record.created).map((record) => record.recordId);
  const before = new Map<string, RowSnapshot>();
  if (updated.length === 0) return before;
  const { rows } = await sql<{ objectId: string; previous: RowSnapshot }>`
    select object_id, previous from events
    where tenant_id = ${tenantId} and object_id = any(${updated}::uuid[]) and request_id = ${`import:${importId}`}
    order by object_id, xid, seq`.execute(trx);
  for (const { objectId, previous } of rows) {
    const values: Record<string, unknown> = { ...before.get(objectId) };
    for (const [column, value] of Object.entries(previous)) if (!Object.hasOwn(values, column)) values[column] = value;
    before.set(objectId, values);
  }
  return before;
}
