import type { Actor } from '../auth/caller.js';
import type { Scope } from '../auth/scopes.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import { conflict, notFound, validationFailed } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Text } from '../shared/messages.js';
import { importMessages } from './import.messages.js';
import { type ImportRow, importRepository, type RowFault } from './import.repository.js';
import { IMPORT_LIMITS, type ImportObject, type ImportQuery, type ImportResource } from './import.schemas.js';
import { headerFault } from './import-cells.js';
import type { ImportJobs, ImportTarget } from './import-jobs.js';
import { type ImportFile, openCsv, openNdjson, type StoredRow, withinLimit } from './import-reader.js';
import { ERASED_ROW } from './import-rows.js';

export type ImportFormat = 'csv' | 'ndjson';

/** Who asks, with the scopes of its token (an import's routes need its resource's). */
export type ImportCaller = Actor & { readonly scopes: ReadonlySet<string> };

/** The scopes of each resource: its write scope changes, either of its scopes reads an import. */
export const IMPORT_SCOPES: Readonly<Record<ImportResource, { read: Scope; write: Scope }>> = {
  lead: { read: 'leads:read', write: 'leads:write' },
  customer: { read: 'customers:read', write: 'customers:write' },
};

/** A page of an import's faults, and where the next starts. */
export interface FaultPage {
  readonly faults: RowFault[];
  readonly next: string | undefined;
}

/**
 * SPEC §23's imports: the upload, stored in chunks of 1,000 rows as it arrives (never whole in
 * memory), then applied by jobs (ImportJobs); progress, faults, cancel and revert.
 */
export class ImportService {
  constructor(
    private readonly targets: Readonly<Record<ImportResource, ImportTarget>>,
    private readonly jobs: ImportJobs,
  ) {}

  /**
   * Reads the upload `body` into the import's chunks and queues its first chunk. A header at fault
   * is a 400 before anything is stored; an upload that fails half way (too large, a quote never
   * closed, the client gone) leaves nothing behind.
   */
  async receive(
    handle: Db,
    actor: Actor,
    query: ImportQuery,
    format: ImportFormat,
    body: AsyncIterable<Buffer>,
  ): Promise<ImportRow> {
    const target = this.targets[query.resource];
    const source = withinLimit(body);
    const file: ImportFile & { delimiter?: string } = format === 'csv' ? await openCsv(source) : openNdjson(source);
    if (file.columns) {
      const custom = await target.customFields.of(handle, actor.tenantId, true);
      const fault = headerFault(file.columns, target.rows.columnKinds, custom, query.upsert);
      if (fault) throw badFile(fault);
    }
    const id = newId();
    const { tenantId } = actor;
    await importRepository.create(handle, {
      tenantId,
      id,
      resource: query.resource,
      format,
      upsert: query.upsert ?? null,
      dryRun: query.dryRun === true,
      tokenId: actor.tokenId,
      columns: file.columns ? [...file.columns] : null,
      delimiter: file.delimiter ?? null,
    });
    try {
      let total = 0;
      let seq = 0;
      let rows: StoredRow[] = [];
      for await (const row of file.rows) {
        if (++total > IMPORT_LIMITS.rows) throw badFile(importMessages.tooManyRows(IMPORT_LIMITS.rows));
        rows.push(row);
        if (rows.length === IMPORT_LIMITS.chunkRows) {
          await importRepository.addChunk(handle, id, seq++, total - rows.length + 1, rows);
          rows = [];
        }
      }
      if (rows.length > 0) await importRepository.addChunk(handle, id, seq++, total - rows.length + 1, rows);
      await this.jobs.ready();
      const stored = await inTransaction(handle, async (trx) => {
        const received = await importRepository.received(trx, tenantId, id, total);
        if (seq > 0) await this.jobs.add(trx, { tenantId, importId: id, step: 'rows' });
        return received;
      });
      this.jobs.wake();
      return stored;
    } catch (error) {
      await importRepository.discard(handle, tenantId, id).catch(() => undefined);
      throw error;
    }
  }

  /** An import the caller may see: of its tenant, of a resource it holds a scope of (else a 404, which reveals nothing). */
  async find(handle: Db, caller: ImportCaller, id: string, need: 'see' | 'change' = 'see'): Promise<ImportRow> {
    const found = await importRepository.find(handle, caller.tenantId, id);
    if (!found) throw notFound(importMessages.importNotFound);
    const scopes = IMPORT_SCOPES[found.resource];
    const allowed =
      need === 'change'
        ? caller.scopes.has(scopes.write)
        : caller.scopes.has(scopes.read) || caller.scopes.has(scopes.write);
    if (!allowed) throw notFound(importMessages.importNotFound);
    return found;
  }

  /** A page of the faults of an import's rows (`import`) or of its revert (`revert`), after `cursor` (`row.n`). */
  async faults(
    handle: Db,
    caller: ImportCaller,
    id: string,
    { phase, limit, cursor }: { phase: 'import' | 'revert'; limit: number; cursor: string | undefined },
  ): Promise<FaultPage> {
    await this.find(handle, caller, id);
    const [row, n] = (cursor ?? '0.-1').split('.').map(Number) as [number, number];
    const faults = await importRepository.faults(handle, id, phase, { row, n }, limit + 1);
    const page = faults.slice(0, limit);
    const last = page.at(-1) as (RowFault & { n: number }) | undefined;
    return { faults: page, next: faults.length > limit && last ? `${last.row}.${last.n}` : undefined };
  }

  /** Stops an import not over yet: the chunk under way ends, no other starts; what was applied stays. */
  async cancel(handle: Db, caller: ImportCaller, id: string): Promise<ImportRow> {
    const found = await this.find(handle, caller, id, 'change');
    const cancelled = await importRepository.cancel(handle, caller.tenantId, id);
    if (!cancelled) throw conflict(importMessages.notCancellable(found.status));
    await importRepository.dropChunks(handle, id);
    return cancelled;
  }

  /** Starts the revert of an import that is over (ImportJobs does it, a step of 1,000 records at a time). */
  async revert(handle: Db, caller: ImportCaller, id: string): Promise<ImportRow> {
    const found = await this.find(handle, caller, id, 'change');
    if (found.dryRun) throw conflict(importMessages.dryRunNotRevertible);
    if (found.revertStatus !== null) throw conflict(importMessages.alreadyReverted);
    await this.jobs.ready();
    const started = await inTransaction(handle, async (trx) => {
      const row = await importRepository.startRevert(trx, caller.tenantId, id);
      if (row) await this.jobs.add(trx, { tenantId: caller.tenantId, importId: id, step: 'revert', after: null });
      return row;
    });
    if (!started) {
      const now = await this.find(handle, caller, id, 'change');
      throw conflict(
        now.revertStatus !== null ? importMessages.alreadyReverted : importMessages.notRevertible(now.status),
      );
    }
    this.jobs.wake();
    return started;
  }

  /**
   * SPEC §17: the rows of the tenant's imports not applied yet that hold `email` are dropped
   * (each becomes a fault saying why); an import over keeps no rows.
   */
  async eraseHolding(handle: Db, tenantId: string, email: string): Promise<number> {
    const wanted = email.trim().toLowerCase();
    let erased = 0;
    for (const job of await importRepository.unfinished(handle, tenantId)) {
      const column = job.columns?.indexOf('email') ?? -1;
      const holds = (row: StoredRow) => {
        const value = Array.isArray(row)
          ? row[column]
          : typeof row === 'object'
            ? (row as Record<string, unknown>).email
            : undefined;
        return typeof value === 'string' && value.trim().toLowerCase() === wanted;
      };
      await inTransaction(handle, async (trx) => {
        // The import's row is locked, so no chunk is taken meanwhile: a chunk reads its rows once it holds it.
        await importRepository.lock(trx, tenantId, job.id);
        for (const chunk of await importRepository.chunksOf(trx, job.id)) {
          if (!chunk.rows.some(holds)) continue;
          const rows = chunk.rows.map((row) => (holds(row) ? ERASED_ROW : row));
          erased += chunk.rows.filter(holds).length;
          await importRepository.replaceChunk(trx, job.id, chunk.seq, rows);
        }
      });
    }
    return erased;
  }
}

function badFile(text: Text) {
  return validationFailed([{ field: 'body', message: text }], text);
}

/** An import as the API shows it (SPEC §23). */
export function toImport(row: ImportRow): ImportObject {
  const iso = (date: Date | null) => (date === null ? null : date.toISOString());
  return {
    id: row.id,
    resource: row.resource,
    format: row.format,
    upsert: row.upsert,
    dryRun: row.dryRun,
    status: row.status === 'receiving' ? 'queued' : row.status,
    total: row.total,
    processed: row.processed,
    created: row.created,
    updated: row.updated,
    failed: row.failed,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
    revert:
      row.revertStatus === null
        ? null
        : {
            status: row.revertStatus,
            deleted: row.revertDeleted,
            restored: row.revertRestored,
            skipped: row.revertSkipped,
            startedAt: (row.revertStartedAt as Date).toISOString(),
            finishedAt: iso(row.revertFinishedAt),
          },
  };
}
