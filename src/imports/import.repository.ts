import { type RawBuilder, sql } from 'kysely';
import { tokenHolds } from '../auth/token.repository.js';
import type { Db } from '../db/database.js';
import { changeEvents } from '../events/change-events.js';
import type { Text } from '../shared/messages.js';
import type { ImportResource, ImportStatus } from './import.schemas.js';
import type { StoredRow } from './import-reader.js';

/** An import as its table holds it. */
export interface ImportRow {
  tenantId: string;
  id: string;
  resource: ImportResource;
  format: 'csv' | 'ndjson';
  upsert: 'email' | 'externalId' | null;
  dryRun: boolean;
  status: ImportStatus | 'receiving';
  tokenId: string | null;
  columns: string[] | null;
  delimiter: string | null;
  total: number;
  processed: number;
  created: number;
  updated: number;
  failed: number;
  nextRow: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  revertStatus: 'running' | 'succeeded' | null;
  revertAfter: string | null;
  revertDeleted: number;
  revertRestored: number;
  revertSkipped: number;
  revertStartedAt: Date | null;
  revertFinishedAt: Date | null;
}

export type NewImport = Pick<ImportRow, 'tenantId' | 'id' | 'resource' | 'format' | 'upsert' | 'dryRun' | 'tokenId'> &
  Partial<Pick<ImportRow, 'columns' | 'delimiter'>>;

/** One fault of one row: the field (when one), its §2 code, its message in each language. */
export interface RowFault {
  readonly row: number;
  readonly field: string | null;
  readonly code: string;
  readonly message: Text;
  readonly recordId?: string | null;
}

/** A record an import created or updated, and the version it left it at. */
export interface ImportedRecord {
  readonly recordId: string;
  readonly row: number;
  readonly created: boolean;
  readonly version: number;
}

export interface ChunkCounts {
  readonly processed: number;
  readonly created: number;
  readonly updated: number;
  readonly failed: number;
}

/**
 * SPEC §23's imports, their stored rows, their faults and the records they wrote. Every read and
 * change of an import names its tenant; chunks, faults and records belong to an import, reached
 * only through one found in its tenant.
 */
export const importRepository = {
  async create(handle: Db, values: NewImport): Promise<void> {
    await sql`
      insert into imports (tenant_id, id, resource, format, upsert, dry_run, token_id, columns, delimiter, status)
      values (${values.tenantId}, ${values.id}, ${values.resource}, ${values.format}, ${values.upsert},
        ${values.dryRun}, ${values.tokenId}, ${values.columns ?? null}, ${values.delimiter ?? null}, 'receiving')`.execute(
      handle,
    );
  },

  async addChunk(
    handle: Db,
    importId: string,
    seq: number,
    firstRow: number,
    rows: readonly StoredRow[],
  ): Promise<void> {
    await sql`
      insert into import_chunks (import_id, seq, first_row, rows)
      values (${importId}, ${seq}, ${firstRow}, ${JSON.stringify(rows)}::jsonb)`.execute(handle);
  },

  /** The upload is stored: the import waits for its first chunk's job (or, empty, is done: its event written). */
  async received(trx: Db, tenantId: string, id: string, total: number): Promise<ImportRow> {
    const { rows } = await sql<ImportRow>`
      with written as (
        update imports set total = ${total},
          status = case when ${total}::int = 0 then 'succeeded' else 'queued' end,
          started_at = case when ${total}::int = 0 then now() end,
          finished_at = case when ${total}::int = 0 then now() end
        where tenant_id = ${tenantId} and id = ${id} and status = 'receiving'
        returning *
      ), event as (
        insert into events (tenant_id, type, object_id, token_id, request_id, object, previous)
        ${changeEvents.ofFinished('written', 'import')}
      )
      select * from written`.execute(trx);
    return rows[0] as ImportRow;
  },

  /** An upload that failed: gone, with what it stored. */
  async discard(handle: Db, tenantId: string, id: string): Promise<void> {
    await sql`delete from imports where tenant_id = ${tenantId} and id = ${id}`.execute(handle);
  },

  /** An import of the tenant, once its file is stored (an upload under way is not one yet). */
  async find(handle: Db, tenantId: string, id: string): Promise<ImportRow | undefined> {
    const { rows } = await sql<ImportRow>`
      select * from imports where tenant_id = ${tenantId} and id = ${id} and status <> 'receiving'`.execute(handle);
    return rows[0];
  },

  /** The stored rows `offset` to `offset + count - 1` of chunk `seq`, and the number of the first. */
  async rowsOf(
    handle: Db,
    importId: string,
    seq: number,
    offset: number,
    count: number,
  ): Promise<{ firstRow: number; rows: StoredRow[] } | undefined> {
    const slice = `$[${offset} to ${offset + count - 1}]`;
    const { rows } = await sql<{ firstRow: number; rows: StoredRow[] }>`
      select first_row + ${offset}::int as first_row, jsonb_path_query_array(rows, ${slice}::jsonpath) as rows
      from import_chunks where import_id = ${importId} and seq = ${seq}`.execute(handle);
    return rows[0];
  },

  /**
   * Takes the import's next rows for the transaction `trx` — at most `step`, within one stored
   * chunk — and moves it on past them: the import's row stays locked until `trx` ends, so a second
   * job of the same import waits, then finds them taken. Undefined when no rows are left, the
   * import is over (cancelled), the token that made it no longer holds or its tenant is inactive;
   * `from` is the first row taken (from 0), `count` how many.
   */
  async claim(
    trx: Db,
    tenantId: string,
    id: string,
    step: number,
    chunkRows: number,
  ): Promise<(ImportRow & { from: number; count: number }) | undefined> {
    const { rows } = await sql<ImportRow & { from: number; count: number }>`
      with taken as (
        select next_row as from_row, least(${step}::int, ${chunkRows}::int - next_row % ${chunkRows}::int, total - next_row) as count
        from imports
        where tenant_id = ${tenantId} and id = ${id} and status in ('queued', 'running') and next_row < total
          and not ${TOKEN_LAPSED} and ${TENANT_ACTIVE}
        for update
      )
      update imports set next_row = next_row + taken.count, status = 'running', started_at = coalesce(started_at, now())
      from taken where tenant_id = ${tenantId} and id = ${id}
      returning imports.*, taken.from_row as "from", taken.count`.execute(trx);
    return rows[0];
  },

  /** Adds a chunk's counts; `last`: the import is then done, and its `import.finished` event written (SPEC §23). */
  async progress(trx: Db, tenantId: string, id: string, counts: ChunkCounts, last: boolean): Promise<ImportRow> {
    const { rows } = await sql<ImportRow>`
      with written as (
        update imports set processed = processed + ${counts.processed}, created = created + ${counts.created},
          updated = updated + ${counts.updated}, failed = failed + ${counts.failed},
          status = case when ${last} then 'succeeded' else status end,
          finished_at = case when ${last} then now() else finished_at end
        where tenant_id = ${tenantId} and id = ${id}
        returning *
      ), event as (
        insert into events (tenant_id, type, object_id, token_id, request_id, object, previous)
        ${changeEvents.ofFinished('written', 'import', { when: sql`${last}` })}
      )
      select * from written`.execute(trx);
    return rows[0] as ImportRow;
  },

  async addFaults(trx: Db, importId: string, phase: 'import' | 'revert', faults: readonly RowFault[]): Promise<void> {
    if (faults.length === 0) return;
    const numbered = new Map<number, number>();
    const values = faults.map((fault) => {
      const n = numbered.get(fault.row) ?? 0;
      numbered.set(fault.row, n + 1);
      return {
        row: fault.row,
        n,
        field: fault.field,
        code: fault.code,
        message: fault.message,
        record_id: fault.recordId ?? null,
      };
    });
    await sql`
      insert into import_errors (import_id, phase, row, n, field, code, message, record_id)
      select ${importId}, ${phase}, f.row, f.n, f.field, f.code, f.message, f.record_id
      from jsonb_to_recordset(${JSON.stringify(values)}::jsonb)
        as f(row integer, n smallint, field text, code text, message jsonb, record_id uuid)
      on conflict do nothing`.execute(trx);
  },

  /** Records written by a chunk; a record written twice by one import keeps its first row and how it began. */
  async addRecords(trx: Db, importId: string, records: readonly ImportedRecord[]): Promise<void> {
    if (records.length === 0) return;
    await sql`
      insert into import_records (import_id, record_id, row, created, version)
      select ${importId}, r."recordId", r.row, r.created, r.version
      from jsonb_to_recordset(${JSON.stringify(records)}::jsonb)
        as r("recordId" uuid, row integer, created boolean, version integer)
      on conflict (import_id, record_id) do update set version = excluded.version`.execute(trx);
  },

  /** A page of an import's faults, in row order, after the fault `after`. */
  async faults(
    handle: Db,
    importId: string,
    phase: 'import' | 'revert',
    after: { row: number; n: number },
    limit: number,
  ): Promise<(RowFault & { n: number })[]> {
    const { rows } = await sql<RowFault & { n: number }>`
      select row, n, field, code, message, record_id from import_errors
      where import_id = ${importId} and phase = ${phase} and (row, n) > (${after.row}, ${after.n})
      order by row, n limit ${limit}`.execute(handle);
    return rows;
  },

  /** Locks an import's row until the transaction `trx` ends (a chunk's claim waits for it). */
  async lock(trx: Db, tenantId: string, id: string): Promise<void> {
    await sql`select 1 from imports where tenant_id = ${tenantId} and id = ${id} for update`.execute(trx);
  },

  /** Ends an import not over yet, with its `import.finished` event; undefined when it is over (or no such import). */
  cancel(handle: Db, tenantId: string, id: string): Promise<ImportRow | undefined> {
    return end(handle, tenantId, id, 'cancelled');
  },

  /**
   * Ends as cancelled, with its event, an import whose token has been revoked or has expired since
   * it was made: the import writes as that token (SPEC §5), and a token taken back must stop what
   * it started, as a webhook of that token stops delivering. Undefined when the token still holds.
   */
  cancelIfTokenLapsed(handle: Db, tenantId: string, id: string): Promise<ImportRow | undefined> {
    return end(handle, tenantId, id, 'cancelled', TOKEN_LAPSED);
  },

  /**
   * Whether the import has rows left to apply and waits for its tenant to be active again (SPEC
   * §5.5: a deactivated tenant loses nothing, and nothing is done in its name meanwhile).
   */
  async waitsForTenant(handle: Db, tenantId: string, id: string): Promise<boolean> {
    const { rows } = await sql<{ waits: boolean }>`
      select exists (select 1 from imports where tenant_id = ${tenantId} and id = ${id}
        and status in ('queued', 'running') and next_row < total and not ${TENANT_ACTIVE}) as waits`.execute(handle);
    return rows[0]?.waits === true;
  },

  /** Marks an import failed for good (its chunk could not be applied however often it was tried), with its event. */
  fail(handle: Db, tenantId: string, id: string): Promise<ImportRow | undefined> {
    return end(handle, tenantId, id, 'failed');
  },

  /** The stored rows of an import that is over: no longer needed. */
  async dropChunks(handle: Db, importId: string): Promise<void> {
    await sql`delete from import_chunks where import_id = ${importId}`.execute(handle);
  },

  /** Starts the revert of an import that is over (not a dry run, not reverted before); undefined when it may not. */
  async startRevert(handle: Db, tenantId: string, id: string): Promise<ImportRow | undefined> {
    const { rows } = await sql<ImportRow>`
      update imports set revert_status = 'running', revert_started_at = now()
      where tenant_id = ${tenantId} and id = ${id} and status in ('succeeded', 'failed', 'cancelled')
        and not dry_run and revert_status is null
      returning *`.execute(handle);
    return rows[0];
  },

  /** The next records of an import to revert, in record id order, after `after`. */
  async recordsAfter(handle: Db, importId: string, after: string | null, limit: number): Promise<ImportedRecord[]> {
    const { rows } = await sql<ImportedRecord>`
      select record_id as "recordId", row, created, version from import_records
      where import_id = ${importId} and (${after}::uuid is null or record_id > ${after}::uuid)
      order by record_id limit ${limit}`.execute(handle);
    return rows;
  },

  /**
   * Takes the revert's step after `after` for the transaction `trx` and moves it to `next` with
   * its counts (`next` null: the revert is done); undefined when that step was done already.
   */
  async revertStep(
    trx: Db,
    tenantId: string,
    id: string,
    after: string | null,
    next: string | null,
    counts: { deleted: number; restored: number; skipped: number },
  ): Promise<ImportRow | undefined> {
    const { rows } = await sql<ImportRow>`
      update imports set revert_after = ${next}, revert_deleted = revert_deleted + ${counts.deleted},
        revert_restored = revert_restored + ${counts.restored}, revert_skipped = revert_skipped + ${counts.skipped},
        revert_status = case when ${next}::uuid is null then 'succeeded' else 'running' end,
        revert_finished_at = case when ${next}::uuid is null then now() end
      where tenant_id = ${tenantId} and id = ${id} and revert_status = 'running'
        and revert_after is not distinct from ${after}::uuid
      returning *`.execute(trx);
    return rows[0];
  },

  /** Imports with work to do: rows to apply, or a revert under way (every tenant's). */
  async underWay(handle: Db): Promise<ImportRow[]> {
    const { rows } = await sql<ImportRow>`
      select * from imports where status in ('queued', 'running') or revert_status = 'running'`.execute(handle);
    return rows;
  },

  /** The imports of a tenant not over yet, for an erasure to look into. */
  async unfinished(handle: Db, tenantId: string): Promise<ImportRow[]> {
    const { rows } = await sql<ImportRow>`
      select * from imports where tenant_id = ${tenantId} and status in ('receiving', 'queued', 'running')`.execute(
      handle,
    );
    return rows;
  },

  async chunksOf(handle: Db, importId: string): Promise<{ seq: number; rows: StoredRow[] }[]> {
    const { rows } = await sql<{ seq: number; rows: StoredRow[] }>`
      select seq, rows from import_chunks where import_id = ${importId} order by seq`.execute(handle);
    return rows;
  },

  async replaceChunk(handle: Db, importId: string, seq: number, rows: readonly StoredRow[]): Promise<void> {
    await sql`update import_chunks set rows = ${JSON.stringify(rows)}::jsonb where import_id = ${importId} and seq = ${seq}`.execute(
      handle,
    );
  },

  /**
   * Imports kept no longer: over before `cutoff` (their events are pruned, so no revert), and
   * uploads that never finished (their instance died) a day after they began.
   */
  async prune(handle: Db, cutoff: Date): Promise<void> {
    await sql`
      delete from imports
      where (finished_at < ${cutoff} and (revert_status is null or revert_status = 'succeeded'))
         or (status = 'receiving' and created_at < now() - interval '1 day')`.execute(handle);
  },
};

/** Of an import: its tenant is active (SPEC §5.5). */
const TENANT_ACTIVE = sql`(select t.active from tenants t where t.id = imports.tenant_id)`;
/** Of an import: the token it writes as is revoked, expired, or gone. */
const TOKEN_LAPSED = sql`not coalesce(${tokenHolds(sql.raw('imports.token_id'), sql.raw('imports.tenant_id'))}, false)`;

/** Ends an import not over yet as `status`, with its `import.finished` event (SPEC §23), in one statement. */
async function end(
  handle: Db,
  tenantId: string,
  id: string,
  status: 'cancelled' | 'failed',
  when: RawBuilder<unknown> = sql`true`,
): Promise<ImportRow | undefined> {
  const { rows } = await sql<ImportRow>`
    with written as (
      update imports set status = ${status}, finished_at = now()
      where tenant_id = ${tenantId} and id = ${id} and status in ('queued', 'running') and ${when}
      returning *
    ), event as (
      insert into events (tenant_id, type, object_id, token_id, request_id, object, previous)
      ${changeEvents.ofFinished('written', 'import')}
    )
    select * from written`.execute(handle);
  return rows[0];
}
