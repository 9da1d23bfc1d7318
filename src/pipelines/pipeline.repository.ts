import { sql } from 'kysely';
import type { Change } from '../auth/caller.js';
import type { Db } from '../db/database.js';
import type { StoredStage } from '../db/tables.js';
import { toIso } from '../db/timestamp-text.js';
import { changeEvents } from '../events/change-events.js';
import { newId } from '../shared/ids.js';
import { FIRST_PIPELINE_NAME, type Pipeline, type Stage, storedPipeline } from './pipeline.types.js';

const COLUMNS = ['id', 'name', 'isDefault', 'stages', 'createdAt', 'updatedAt'] as const;

/** A pipeline's row as Kysely reads it, or as an event holds it (jsonb: timestamps as text). */
export interface PipelineRow {
  id: string;
  name: string;
  isDefault: boolean;
  stages: StoredStage[];
  createdAt: Date | string;
  updatedAt: Date | string;
}

export interface PipelineChanges {
  name?: string;
  stages?: readonly Stage[];
  isDefault?: boolean;
}

/** A change as the parameters of an event statement. */
function changeParams(change: Change) {
  return { tokenId: change.tokenId ?? null, requestId: change.requestId ?? null };
}

/**
 * Each tenant's pipelines (SPEC §20): every statement takes the tenant first. Each write carries
 * its `pipeline.*` event in the same statement, as a record's does (SPEC §14).
 */
export class PipelineRepository {
  /** A tenant's pipelines, oldest first. */
  async list(handle: Db, tenantId: string): Promise<Pipeline[]> {
    const rows = await handle
      .selectFrom('pipelines')
      .select(COLUMNS)
      .where('tenantId', '=', tenantId)
      .orderBy('createdAt')
      .orderBy('id')
      .execute();
    return rows.map(toPipeline);
  }

  /**
   * Gives the tenant its first pipeline (id: the tenant's), the default, when it has none; a
   * tenant that has one, or gets one meanwhile (another instance), is left as it is.
   */
  async ensureFirst(handle: Db, tenantId: string, stages: readonly Stage[]): Promise<void> {
    await sql`
      insert into pipelines (tenant_id, id, name, is_default, stages)
      select ${tenantId}::uuid, ${tenantId}::uuid, ${FIRST_PIPELINE_NAME}, true, ${JSON.stringify(stages)}::jsonb
      where not exists (select 1 from pipelines where tenant_id = ${tenantId}::uuid)
      on conflict do nothing`.execute(handle);
  }

  /** ensureFirst for every tenant that has no pipeline (at start: the tenants made before pipelines existed). */
  async ensureFirstOfAll(handle: Db, stages: readonly Stage[]): Promise<number> {
    const { numAffectedRows } = await sql`
      insert into pipelines (tenant_id, id, name, is_default, stages)
      select t.id, t.id, ${FIRST_PIPELINE_NAME}, true, ${JSON.stringify(stages)}::jsonb from tenants t
      where not exists (select 1 from pipelines p where p.tenant_id = t.id)
      on conflict do nothing`.execute(handle);
    return Number(numAffectedRows ?? 0);
  }

  async count(handle: Db, tenantId: string): Promise<number> {
    const row = await handle
      .selectFrom('pipelines')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('tenantId', '=', tenantId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async insert(
    trx: Db,
    change: Change,
    values: { name: string; stages: readonly Stage[]; isDefault: boolean },
  ): Promise<Pipeline> {
    const { rows } = await sql<PipelineRow>`
      with written as (
        insert into pipelines (tenant_id, id, name, is_default, stages)
        values (${change.tenantId}, ${newId()}, ${values.name}, ${values.isDefault}, ${JSON.stringify(values.stages)}::jsonb)
        returning *
      ), event as (
        insert into events (tenant_id, type, object_id, token_id, request_id, object, previous)
        ${changeEvents.ofRows('written', 'pipeline.created', changeParams(change))}
      )
      select id, name, is_default, stages, created_at, updated_at from written`.execute(trx);
    return toPipeline(rows[0] as PipelineRow);
  }

  /** Writes the changes that change something, with a `pipeline.updated` event; undefined when there is no such pipeline. */
  async update(trx: Db, change: Change, id: string, changes: PipelineChanges): Promise<Pipeline | undefined> {
    const set = [
      changes.name === undefined ? undefined : sql`name = ${changes.name}`,
      changes.stages === undefined ? undefined : sql`stages = ${JSON.stringify(changes.stages)}::jsonb`,
      changes.isDefault === undefined ? undefined : sql`is_default = ${changes.isDefault}`,
    ].filter((part) => part !== undefined);
    const differs = [
      changes.name === undefined ? undefined : sql`p.name is distinct from ${changes.name}`,
      changes.stages === undefined
        ? undefined
        : sql`p.stages is distinct from ${JSON.stringify(changes.stages)}::jsonb`,
      changes.isDefault === undefined ? undefined : sql`p.is_default is distinct from ${changes.isDefault}`,
    ].filter((part) => part !== undefined);
    if (set.length === 0) return this.find(trx, change.tenantId, id);
    const { rows } = await sql<PipelineRow>`
      with locked as (
        select id as locked_id, to_jsonb(p) as old_row from pipelines p
        where tenant_id = ${change.tenantId} and id = ${id} and (${sql.join(differs, sql` or `)})
        for update
      ), written as (
        update pipelines set ${sql.join(set)}, updated_at = clock_timestamp(), version = version + 1
        from locked where pipelines.tenant_id = ${change.tenantId} and pipelines.id = locked.locked_id
        returning pipelines.*
      ), event as (
        insert into events (tenant_id, type, object_id, token_id, request_id, object, previous)
        ${changeEvents.ofUpdate('pipeline', { ...changeParams(change), eventType: 'pipeline.updated' })}
      )
      select id, name, is_default, stages, created_at, updated_at from written`.execute(trx);
    const written = rows[0];
    return written ? toPipeline(written) : this.find(trx, change.tenantId, id);
  }

  async find(handle: Db, tenantId: string, id: string): Promise<Pipeline | undefined> {
    const row = await handle
      .selectFrom('pipelines')
      .select(COLUMNS)
      .where('tenantId', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toPipeline(row);
  }

  /** Locks the tenant's default pipeline until `trx` ends (a change of the default takes turns with others). */
  async lockDefault(trx: Db, tenantId: string): Promise<string | undefined> {
    const row = await trx
      .selectFrom('pipelines')
      .select('id')
      .where('tenantId', '=', tenantId)
      .where('isDefault', '=', true)
      .forUpdate()
      .executeTakeFirst();
    return row?.id;
  }

  async delete(trx: Db, change: Change, id: string): Promise<boolean> {
    const { rows } = await sql<{ id: string }>`
      with written as (
        delete from pipelines where tenant_id = ${change.tenantId} and id = ${id} returning *
      ), event as (
        insert into events (tenant_id, type, object_id, token_id, request_id, object, previous)
        ${changeEvents.ofRows('written', 'pipeline.deleted', changeParams(change))}
      )
      select id from written`.execute(trx);
    return rows.length > 0;
  }

  /**
   * How many of the tenant's leads are in `pipelineId`, by status: in the stages `stages` (all
   * the pipeline's leads, whatever their status, when undefined).
   */
  async leadsIn(handle: Db, tenantId: string, pipelineId: string, stages?: readonly string[]): Promise<number> {
    const stored = storedPipeline(tenantId, pipelineId);
    const inStages = stages === undefined ? sql`` : sql`and status = any(${[...stages]}::text[])`;
    const { rows } = await sql<{ count: number }>`
      select count(*)::int as count from leads
      where tenant_id = ${tenantId} and pipeline_id is not distinct from ${stored}::uuid ${inStages}`.execute(handle);
    return rows[0]?.count ?? 0;
  }
}

/** A row (or an event's copy of one) as the API shows the pipeline. */
export function toPipeline(row: PipelineRow): Pipeline {
  return {
    id: row.id,
    name: row.name,
    default: row.isDefault,
    stages: row.stages.map(({ key, label, kind }) => ({ key, label, kind })),
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  };
}
