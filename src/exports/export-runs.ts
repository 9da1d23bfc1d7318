import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/database.js';
import type { CustomFieldCatalog } from '../fields/custom-field-catalog.js';
import { BackgroundRuns } from '../shared/background-runs.js';
import { ApiError } from '../shared/errors.js';
import { exportRepository } from './export.repository.js';
import type { ExportResources } from './export-resources.js';
import { ExportBusy, SnapshotMoved, snapshotFor } from './export-snapshot.js';
import { EXPORT_PAGE_ROWS, writeFile } from './export-writer.js';

/** How long a run that failed (the database away, say) waits before it starts over. */
const RETRY_MS = 10_000;
/** Runs an export gets before it is marked failed. */
const MAX_RUNS = 3;
/** Optimistic tries on the embedded database before the export is read in one transaction. */
const OPTIMISTIC_TRIES = 3;
/** How often files past their 24 hours are deleted. */
const SWEEP_MS = 10 * 60_000;

/**
 * SPEC §23: exports run in the background, a few at a time per instance (each holds a PostgreSQL
 * connection for its snapshot; the embedded database runs one). A run that is cut short (a crash,
 * a shutdown) leaves its export `running`: `resumeAll`, at the next start, starts it over from its
 * beginning, its partial chunks removed. The sweep deletes files past their time.
 */
export class ExportRuns {
  readonly #runs: BackgroundRuns;
  readonly #active = new Set<string>();
  readonly #waiting: (() => void)[] = [];
  readonly #slots: number;
  #busy = 0;
  #sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly database: Database,
    private readonly resources: ExportResources,
    private readonly catalog: CustomFieldCatalog,
    private readonly log: FastifyBaseLogger,
    /** Rows per page and chunk (tests make them small, to stop a run between two pages). */
    private readonly pageRows = EXPORT_PAGE_ROWS,
  ) {
    this.#runs = new BackgroundRuns(log, 'export', RETRY_MS);
    this.#slots = database.backend === 'postgres' ? 2 : 1;
  }

  /** Runs the export; resolves when it finished, failed, or was left for later. */
  start(tenantId: string, id: string): Promise<void> {
    const key = `${tenantId}/${id}`;
    if (this.#active.has(key)) return Promise.resolve();
    this.#active.add(key);
    return this.#runs
      .start({ tenantId, export: id }, () => this.#inSlot(() => this.#run(tenantId, id)))
      .finally(() => this.#active.delete(key));
  }

  /**
   * Starts over every export a stopped instance left unfinished, and the periodic sweep, which
   * also looks for them again: an instance that crashed leaves its exports to the others. Taking
   * one that another instance runs is harmless: on PostgreSQL its snapshot's lock says so
   * (ExportBusy), and a finished one is no longer claimed.
   */
  async resumeAll(): Promise<void> {
    this.#sweep ??= setInterval(() => {
      this.sweep()
        .then(() => this.#resumeUnfinished())
        .catch((error: unknown) => this.log.warn({ err: error }, 'export sweep failed'));
    }, SWEEP_MS).unref();
    await this.sweep();
    await this.#resumeUnfinished();
  }

  async #resumeUnfinished(): Promise<void> {
    for (const { tenantId, id } of await exportRepository.unfinished(this.database.db)) {
      if (this.#runs.stopping) return;
      void this.start(tenantId, id);
    }
  }

  /** Deletes the files past their time (and the rows of long-expired exports); answers how many files. */
  sweep(now = new Date()): Promise<number> {
    return exportRepository.sweep(this.database.db, now);
  }

  async stop(): Promise<void> {
    clearInterval(this.#sweep);
    await this.#runs.stop();
    for (const wake of this.#waiting.splice(0)) wake();
  }

  async #inSlot(work: () => Promise<void>): Promise<void> {
    while (this.#busy >= this.#slots) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#busy += 1;
    try {
      if (!this.#runs.stopping) await work();
    } finally {
      this.#busy -= 1;
      this.#waiting.shift()?.();
    }
  }

  async #run(tenantId: string, id: string): Promise<void> {
    const { db } = this.database;
    const stopping = () => this.#runs.stopping;
    const found = await exportRepository.find(db, tenantId, id);
    if (!found || (found.status !== 'queued' && found.status !== 'running')) return;
    const target = { tenantId, id, resource: found.resource };
    for (let tries = 1; ; tries++) {
      try {
        await snapshotFor(this.database, target, tries <= OPTIMISTIC_TRIES, async (session) => {
          // A try after the rows moved is the same run, started over: not counted.
          const request = await exportRepository.claim(session.writer, tenantId, id, tries === 1);
          if (!request) return;
          if (request.runs > MAX_RUNS) {
            await exportRepository.fail(session.writer, tenantId, id);
            return;
          }
          const spec = this.resources[request.resource];
          const file = await writeFile(request, spec, this.catalog, session, stopping, this.pageRows);
          if (file) await exportRepository.finish(session.writer, tenantId, id, file);
        });
        return;
      } catch (error) {
        if (error instanceof SnapshotMoved) continue;
        if (error instanceof ExportBusy) return;
        // The query no longer holds (a custom field or a pipeline it names was deleted): it never will.
        if (error instanceof ApiError) {
          this.log.warn({ err: error, tenantId, export: id }, 'export failed: its query no longer holds');
          await exportRepository.fail(db, tenantId, id);
          return;
        }
        throw error;
      }
    }
  }
}
