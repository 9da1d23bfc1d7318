import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { changeEvents } from '../events/change-events.js';
import type { ExportObject } from './export.schemas.js';

/** How long a finished export's file is kept (SPEC §23). */
export const EXPORT_FILE_MS = 24 * 60 * 60_000;
/** How long an expired export's row is kept after its file went: `GET /exports/:id` then says `expired`, the file a 410. */
export const EXPORT_ROW_GRACE_MS = 24 * 60 * 60_000;

/** What a run needs of an export: its request. */
export interface ExportRequest {
  readonly tenantId: string;
  readonly id: string;
  readonly resource: 'lead' | 'customer';
  readonly format: 'csv' | 'ndjson';
  readonly query: Record<string, unknown>;
  readonly fields: string[] | null;
  readonly runs: number;
}

const OBJECT_COLUMNS = [
  'id',
  'resource',
  'format',
  'status',
  'total',
  'processed',
  'startedAt',
  'finishedAt',
  'expiresAt',
  'fileBytes',
] as const;

export type ObjectRow = {
  id: string;
  resource: 'lead' | 'customer';
  format: 'csv' | 'ndjson';
  status: ExportObject['status'];
  total: number | null;
  processed: number;
  startedAt: Date | null;
  finishedAt: Date | null;
  expiresAt: Date | null;
  fileBytes: string | null;
};

/** An export as the API shows it at `now` (its `export.finished` event: as it was when it ended). */
export function toObject(row: ObjectRow, now = Date.now()): ExportObject {
  // A file whose time is up is expired, whether or not the sweep has deleted it yet.
  const expired = row.status === 'succeeded' && row.expiresAt !== null && row.expiresAt.getTime() <= now;
  return {
    ...row,
    status: expired ? 'expired' : row.status,
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    fileBytes: row.fileBytes === null ? null : Number(row.fileBytes),
  };
}

/**
 * The `export.finished` event of the export a statement's `written` ended, in that statement; its
 * request (`query`, `fields`) left out: a filter may name a person (SPEC §17).
 */
const finishedEvent = sql`
  insert into events (tenant_id, type, object_id, token_id, request_id, object, previous)
  ${changeEvents.ofFinished('written', 'export', { omit: ['query', 'fields'] })}`;

/** Exports and their files (SPEC §23): every statement takes the tenant first. */
export const exportRepository = {
  async create(
    handle: Db,
    tenantId: string,
    values: { id: string; resource: string; format: string; query: object; fields: string[] | null; tokenId: string },
  ): Promise<ExportObject> {
    const row = await handle
      .insertInto('exports')
      .values({
        tenantId,
        id: values.id,
        resource: values.resource as 'lead',
        format: values.format as 'csv',
        query: JSON.stringify(values.query),
        fields: values.fields && JSON.stringify(values.fields),
        tokenId: values.tokenId,
      })
      .returning(OBJECT_COLUMNS)
      .executeTakeFirstOrThrow();
    return toObject(row);
  },

  async find(handle: Db, tenantId: string, id: string): Promise<ExportObject | undefined> {
    const row = await handle
      .selectFrom('exports')
      .select(OBJECT_COLUMNS)
      .where('tenantId', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toObject(row);
  },

  /** Exports not finished (a crash left them queued or running), oldest first. */
  unfinished(handle: Db): Promise<{ tenantId: string; id: string }[]> {
    return handle
      .selectFrom('exports')
      .select(['tenantId', 'id'])
      .where('status', 'in', ['queued', 'running'])
      .orderBy('createdAt')
      .execute();
  },

  /**
   * Starts (or starts over) a run: status running, progress zero, its former chunks removed.
   * Undefined when the export is no longer to run (finished, expired, gone).
   */
  async claim(handle: Db, tenantId: string, id: string, newRun: boolean): Promise<ExportRequest | undefined> {
    const row = await handle
      .updateTable('exports')
      .set({ status: 'running', processed: 0, startedAt: sql`now()`, runs: sql`runs + ${newRun ? 1 : 0}` })
      .where('tenantId', '=', tenantId)
      .where('id', '=', id)
      .where('status', 'in', ['queued', 'running'])
      .returning(['tenantId', 'id', 'resource', 'format', 'query', 'fields', 'runs'])
      .executeTakeFirst();
    if (!row) return undefined;
    await this.dropChunks(handle, tenantId, id);
    return row;
  },

  async dropChunks(handle: Db, tenantId: string, id: string): Promise<void> {
    await handle.deleteFrom('exportChunks').where('tenantId', '=', tenantId).where('exportId', '=', id).execute();
  },

  /**
   * Stores one chunk and the progress; false when the export is no longer running (an erasure
   * expired it meanwhile), and then none of its chunks is kept.
   */
  async addChunk(
    handle: Db,
    tenantId: string,
    id: string,
    chunk: { seq: number; data: Buffer; processed: number },
  ): Promise<boolean> {
    // One statement: the chunk is stored only while the export runs, in one commit with its progress.
    const { rows } = await sql<{ seq: number }>`
      with progress as (
        update exports set processed = ${chunk.processed}
        where tenant_id = ${tenantId} and id = ${id} and status = 'running'
        returning tenant_id, id
      )
      insert into export_chunks (tenant_id, export_id, seq, data)
      select tenant_id, id, ${chunk.seq}, ${chunk.data} from progress
      returning seq`.execute(handle);
    const running = rows[0];
    if (!running) await this.dropChunks(handle, tenantId, id);
    return running !== undefined;
  },

  /** The file is whole: the export succeeded, with its `export.finished` event (SPEC §23). */
  async finish(handle: Db, tenantId: string, id: string, outcome: { total: number; fileBytes: number }): Promise<void> {
    await sql`
      with written as (
        update exports set status = 'succeeded', total = ${outcome.total}, processed = ${outcome.total},
          file_bytes = ${outcome.fileBytes}, finished_at = now(),
          expires_at = now() + ${`${EXPORT_FILE_MS} milliseconds`}::interval
        where tenant_id = ${tenantId} and id = ${id} and status = 'running'
        returning *
      )
      ${finishedEvent}`.execute(handle);
  },

  /** The export failed for good, with its `export.finished` event (SPEC §23). */
  async fail(handle: Db, tenantId: string, id: string): Promise<void> {
    await this.dropChunks(handle, tenantId, id);
    await sql`
      with written as (
        update exports set status = 'failed', finished_at = now(),
          expires_at = now() + ${`${EXPORT_FILE_MS} milliseconds`}::interval
        where tenant_id = ${tenantId} and id = ${id} and status in ('queued', 'running')
        returning *
      )
      ${finishedEvent}`.execute(handle);
  },

  /**
   * SPEC §17: an erasure in the tenant expires every export it has (any may hold the person),
   * running ones included (their run stops at its next chunk), and deletes their files.
   */
  async expireAll(handle: Db, tenantId: string): Promise<number> {
    const expired = await handle
      .updateTable('exports')
      .set({ status: 'expired', expiresAt: sql`now()` })
      .where('tenantId', '=', tenantId)
      .where('status', '!=', 'expired')
      .returning('id')
      .execute();
    await handle.deleteFrom('exportChunks').where('tenantId', '=', tenantId).execute();
    return expired.length;
  },

  /** The chunks of a file from `seq` on, at most `limit` of them. */
  chunks(
    handle: Db,
    tenantId: string,
    id: string,
    seq: number,
    limit: number,
  ): Promise<{ seq: number; data: Buffer }[]> {
    return handle
      .selectFrom('exportChunks')
      .select(['seq', 'data'])
      .where('tenantId', '=', tenantId)
      .where('exportId', '=', id)
      .where('seq', '>=', seq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  },

  /**
   * The sweep (every tenant's, work of no request): files past `now` are deleted and their exports
   * marked expired; rows expired longer than the grace are deleted. Answers how many files went.
   */
  async sweep(handle: Db, now: Date): Promise<number> {
    const expired = await handle
      .updateTable('exports')
      .set({ status: 'expired' })
      .where('expiresAt', '<=', now)
      .where('status', '=', 'succeeded')
      .returning(['tenantId', 'id'])
      .execute();
    for (const { tenantId, id } of expired) await this.dropChunks(handle, tenantId, id);
    await handle
      .deleteFrom('exports')
      .where('expiresAt', '<=', new Date(now.getTime() - EXPORT_ROW_GRACE_MS))
      .execute();
    return expired.length;
  },
};
