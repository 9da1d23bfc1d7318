import { type RawBuilder, sql } from 'kysely';
import type { Change } from '../auth/caller.js';
import type { Db } from '../db/database.js';
import { changeEvents, type EventFamily } from '../events/change-events.js';
import { newId } from '../shared/ids.js';
import type { StoredRow } from './record-store.js';

/** A row as `to_jsonb` gives it: snake_case columns, what an undo puts back as it was. */
export type RowSnapshot = Readonly<Record<string, unknown>>;

/** A merge as it is kept for its undo (SPEC §21). */
export interface MergeRow {
  readonly id: string;
  readonly resource: EventFamily;
  readonly targetId: string;
  readonly sourceIds: string[];
  readonly targetBefore: RowSnapshot;
  readonly targetAfter: RowSnapshot;
  readonly sources: RowSnapshot[];
  readonly createdAt: Date;
  readonly undoneAt: Date | null;
}

function params(change: Change) {
  return { tokenId: change.tokenId ?? null, requestId: change.requestId ?? null };
}

/** `column = value` for each column (camelCase names, as toColumns gives them); jsonb ones cast. */
function assignments(columns: Readonly<Record<string, unknown>>, jsonb: readonly string[]) {
  return Object.entries(columns).map(([column, value]) =>
    jsonb.includes(column)
      ? sql`${sql.ref(column)} = ${value === null ? null : JSON.stringify(value)}::jsonb`
      : sql`${sql.ref(column)} = ${value}`,
  );
}

/**
 * The statements of SPEC §21's merges and undos, on one resource's table: each change with its
 * event in the same statement, as every write (SPEC §14).
 */
export class RecordMergeStore {
  constructor(
    private readonly table: 'leads' | 'customers',
    private readonly family: EventFamily,
    /** The jsonb columns (a record's `custom`). */
    private readonly jsonbColumns: readonly string[],
  ) {}

  /** The rows of `ids` in the tenant, locked until `trx` ends (in id order: merges of overlapping records take turns). */
  async lock(trx: Db, tenantId: string, ids: readonly string[]): Promise<Map<string, RowSnapshot>> {
    const { rows } = await sql<{ id: string; snapshot: RowSnapshot }>`
      select id, to_jsonb(t) as snapshot from ${sql.table(this.table)} as t
      where tenant_id = ${tenantId} and id = any(${[...ids]}::uuid[])
      order by id for update`.execute(trx.withoutPlugins());
    return new Map(rows.map((row) => [row.id, row.snapshot]));
  }

  /** Deletes the sources, each with its `*.deleted` event (reason `merge`, `merged_into` the target). */
  async deleteSources(trx: Db, change: Change, sourceIds: readonly string[], targetId: string): Promise<void> {
    const { tokenId, requestId } = params(change);
    await sql`
      with written as (
        delete from ${sql.table(this.table)} where tenant_id = ${change.tenantId} and id = any(${[...sourceIds]}::uuid[])
        returning *
      )
      insert into events (tenant_id, type, object_id, token_id, request_id, object, previous, reason, merged_into)
      select tenant_id, ${`${this.family}.deleted`}, id, ${tokenId}::uuid, ${requestId}::text, to_jsonb(written), '{}'::jsonb,
        'merge', ${targetId}::uuid
      from written`.execute(trx);
  }

  /**
   * Sets `columns` on the target with a new version, and writes its `*.merged` event (with
   * `merged_ids`) even when no value changed: the merge happened.
   */
  writeTarget(
    trx: Db,
    change: Change,
    targetId: string,
    columns: Readonly<Record<string, unknown>>,
    mergedIds: readonly string[],
  ): Promise<StoredRow> {
    return this.#updateTarget(trx, change, targetId, assignments(columns, this.jsonbColumns), {
      column: sql`merged_ids`,
      value: sql`${[...mergedIds]}::uuid[]`,
      type: `${this.family}.merged`,
    });
  }

  async recordMerge(
    trx: Db,
    change: Change,
    merge: { targetId: string; sourceIds: readonly string[]; before: RowSnapshot; sources: RowSnapshot[] },
  ): Promise<{ id: string; createdAt: Date }> {
    const id = newId();
    const { rows } = await sql<{ createdAt: Date }>`
      insert into merges (tenant_id, id, resource, target_id, source_ids, target_before, target_after, sources, token_id)
      select ${change.tenantId}, ${id}, ${this.family}, ${merge.targetId}, ${[...merge.sourceIds]}::uuid[],
        ${JSON.stringify(merge.before)}::jsonb, to_jsonb(t), ${JSON.stringify(merge.sources)}::jsonb, ${change.tokenId ?? null}::uuid
      from ${sql.table(this.table)} as t where t.tenant_id = ${change.tenantId} and t.id = ${merge.targetId}
      returning created_at`.execute(trx);
    return { id, createdAt: (rows[0] as { createdAt: Date }).createdAt };
  }

  /** Puts a source back as it was (its id, values and createdAt; a new version and updatedAt), with a `*.created` event (reason `unmerge`). */
  async restore(trx: Db, change: Change, source: RowSnapshot): Promise<void> {
    const { tokenId, requestId } = params(change);
    const table = sql.table(this.table);
    const row = { ...source, version: Number(source.version) + 1 };
    await sql`
      with restored as (
        insert into ${table}
        select * from jsonb_populate_record(null::${table}, ${JSON.stringify(row)}::jsonb || jsonb_build_object('updated_at', clock_timestamp()))
        returning *
      )
      insert into events (tenant_id, type, object_id, token_id, request_id, object, previous, reason)
      select tenant_id, ${`${this.family}.created`}, id, ${tokenId}::uuid, ${requestId}::text, to_jsonb(restored), '{}'::jsonb,
        'unmerge'
      from restored`.execute(trx);
  }

  /** Sets the target's columns back (snake_case names, as a snapshot holds them), with its event (reason `unmerge`, or `reason`). */
  async revertTarget(
    trx: Db,
    change: Change,
    targetId: string,
    values: RowSnapshot,
    reason = 'unmerge',
  ): Promise<void> {
    const table = sql.table(this.table);
    const set = Object.entries(values).map(([column, value]) =>
      this.jsonbColumns.includes(column)
        ? sql`${sql.id(column)} = ${JSON.stringify(value)}::jsonb`
        : sql`${sql.id(column)} = (jsonb_populate_record(null::${table}, ${JSON.stringify({ [column]: value })}::jsonb)).${sql.id(column)}`,
    );
    if (set.length > 0)
      await this.#updateTarget(trx, change, targetId, set, { column: sql`reason`, value: sql`${reason}::text` });
  }

  /** Updates the target with `set`, a new version and `updatedAt`, and writes its event with one more column. */
  async #updateTarget(
    trx: Db,
    change: Change,
    targetId: string,
    set: readonly RawBuilder<unknown>[],
    event: { column: RawBuilder<unknown>; value: RawBuilder<unknown>; type?: string },
  ): Promise<StoredRow> {
    const table = sql.table(this.table);
    const { rows } = await sql<StoredRow>`
      with locked as (
        select id as locked_id, to_jsonb(t) as old_row from ${table} as t
        where tenant_id = ${change.tenantId} and id = ${targetId} for update
      ), written as (
        update ${table} set ${sql.join([...set, sql`updated_at = clock_timestamp()`, sql`version = version + 1`])}
        from locked where ${table}.id = locked.locked_id
        returning ${table}.*
      ), event as (
        insert into events (tenant_id, type, object_id, token_id, request_id, object, previous, ${event.column})
        select e.*, ${event.value} from (
          ${changeEvents.ofUpdate(this.family, { ...params(change), eventType: event.type ?? null })}
        ) as e
      )
      select * from written`.execute(trx);
    return rows[0] as StoredRow;
  }
}

/** The merges of a tenant, kept for their undo (SPEC §21). */
export const mergeRepository = {
  async lock(trx: Db, tenantId: string, id: string): Promise<MergeRow | undefined> {
    const { rows } = await sql<MergeRow>`
      select id, resource, target_id, source_ids, target_before, target_after, sources, created_at, undone_at
      from merges where tenant_id = ${tenantId} and id = ${id} for update`.execute(trx.withoutPlugins());
    const row = rows[0] as unknown as Record<string, unknown> | undefined;
    if (!row) return undefined;
    return {
      id: row.id as string,
      resource: row.resource as EventFamily,
      targetId: row.target_id as string,
      sourceIds: row.source_ids as string[],
      targetBefore: row.target_before as RowSnapshot,
      targetAfter: row.target_after as RowSnapshot,
      sources: row.sources as RowSnapshot[],
      createdAt: row.created_at as Date,
      undoneAt: row.undone_at as Date | null,
    };
  },

  async markUndone(trx: Db, tenantId: string, id: string): Promise<void> {
    await sql`update merges set undone_at = now() where tenant_id = ${tenantId} and id = ${id}`.execute(trx);
  },

  /** Removes the merges older than `cutoff` (their events are gone: they cannot be undone). */
  async prune(handle: Db, cutoff: Date): Promise<number> {
    const result = await sql`delete from merges where created_at < ${cutoff}`.execute(handle);
    return Number(result.numAffectedRows ?? 0);
  },

  /** SPEC §17: the merges that kept a record holding `email`, erased with the person's data. */
  async eraseHolding(trx: Db, tenantId: string, email: string): Promise<number> {
    const result = await sql`
      delete from merges where tenant_id = ${tenantId} and (
        target_before ->> 'email' = ${email} or target_after ->> 'email' = ${email}
        or exists (select 1 from jsonb_array_elements(sources) s where s ->> 'email' = ${email})
      )`.execute(trx);
    return Number(result.numAffectedRows ?? 0);
  },
};
