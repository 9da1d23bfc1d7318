import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { type Selectable, sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { PipelineMoveTable } from '../db/tables.js';
import { nextRowsNewestFirst } from '../db/tenant-walk.js';
import { BackgroundRuns } from '../shared/background-runs.js';
import { PIPELINE_CACHE_TTL_MS } from './pipeline-catalog.js';

/** Leads read per step: each step is one short transaction, so writers of those leads wait little. */
const BATCH_ROWS = 1000;
/** How long a move that failed (the database away, say) waits before it tries again. */
const RETRY_MS = 10_000;
/**
 * How long after the change a move looks once more for leads left behind: an instance whose copy
 * of the pipelines predates the change may still put a lead in the stage removed until its copy
 * expires (PipelineCatalog).
 */
const STRAGGLER_WINDOW_MS = PIPELINE_CACHE_TTL_MS + 1_000;

type Step = 'more' | 'walked' | 'done' | 'busy';

type MoveRow = Omit<Selectable<PipelineMoveTable>, 'tenantId'>;

/** A move under way: `walked` settles when every lead that held the stage at the change has moved. */
export interface MoveRun {
  readonly walked: Promise<void>;
  readonly done: Promise<void>;
}

/**
 * SPEC §20: the leads of a stage (or a pipeline) removed with `?moveTo=` go to the stage named, in
 * bounded batches, each lead with its `lead.status_changed` event, never in one long transaction.
 * As CustomValueRemoval does, a move walks the tenant's leads newest first, one batch per
 * transaction, and keeps the position it reached with the pending move (`pipeline_moves`): one cut
 * short by a crash or a shutdown goes on from there at the next start. After the walk, and once
 * every instance's copy of the pipelines is past the change, it looks once more for leads an
 * instance put there meanwhile, and walks again if it finds any.
 */
export class PipelineMoves {
  readonly #runs: BackgroundRuns;

  constructor(
    private readonly db: Db,
    log: FastifyBaseLogger,
  ) {
    this.#runs = new BackgroundRuns(log, 'pipeline move', RETRY_MS);
  }

  start(tenantId: string, id: string): MoveRun {
    let walked: () => void = () => {};
    const walkedPromise = new Promise<void>((resolve) => {
      walked = resolve;
    });
    const done = this.#runs.start({ tenantId, move: id }, () => this.#run(tenantId, id, walked)).finally(walked);
    return { walked: walkedPromise, done };
  }

  /** Runs every move left pending (by an instance that stopped mid-way), one after the other. */
  async resumeAll(): Promise<void> {
    const pending = await this.db.selectFrom('pipelineMoves').select(['tenantId', 'id']).orderBy('createdAt').execute();
    for (const { tenantId, id } of pending) {
      if (this.#runs.stopping) return;
      await this.start(tenantId, id).done;
    }
  }

  /** Stops after the steps under way: what is left resumes at the next start. */
  stop(): Promise<void> {
    return this.#runs.stop();
  }

  async #run(tenantId: string, id: string, walked: () => void): Promise<void> {
    for (;;) {
      if (this.#runs.stopping) return;
      const step = await this.#step(tenantId, id);
      if (step === 'done' || step === 'busy') return;
      if (step === 'walked') {
        walked();
        const wait = await this.#leftToWait(tenantId, id);
        if (wait > 0) await sleep(wait, undefined, { ref: false });
        if (this.#runs.stopping) return;
        if (await this.#finishOrRewalk(tenantId, id)) return;
      }
      // Between steps, other work of the event loop and of the database goes first.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async #leftToWait(tenantId: string, id: string): Promise<number> {
    const row = await this.db
      .selectFrom('pipelineMoves')
      .select('createdAt')
      .where('tenantId', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? row.createdAt.getTime() + STRAGGLER_WINDOW_MS - Date.now() : 0;
  }

  /** True when no lead is left where the move takes them from (the move is then over); else walks again. */
  #finishOrRewalk(tenantId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const move = await this.#lock(trx, tenantId, id);
      if (!move) return true;
      const { rows } = await sql<{ left: boolean }>`
        select exists (select 1 from leads where ${this.#held(tenantId, move)}) as left`.execute(trx);
      if (rows[0]?.left) {
        await sql`update pipeline_moves set after_created_at = null, after_id = null
          where tenant_id = ${tenantId} and id = ${id}`.execute(trx);
        return false;
      }
      await sql`delete from pipeline_moves where tenant_id = ${tenantId} and id = ${id}`.execute(trx);
      return true;
    });
  }

  async #lock(trx: Db, tenantId: string, id: string): Promise<MoveRow | undefined> {
    const { rows } = await sql<MoveRow>`
      select id, from_pipeline, from_stage, to_pipeline, to_stage, after_created_at, after_id, token_id, request_id,
        created_at
      from pipeline_moves where tenant_id = ${tenantId} and id = ${id}
      for update skip locked`.execute(trx);
    return rows[0];
  }

  /** The leads the move takes: in its pipeline (as rows hold it), in its stage if it names one. */
  #held(tenantId: string, move: MoveRow) {
    const stage = move.fromStage === null ? sql`` : sql`and status = ${move.fromStage}`;
    return sql`tenant_id = ${tenantId} and pipeline_id is not distinct from ${move.fromPipeline}::uuid ${stage}`;
  }

  #step(tenantId: string, id: string): Promise<Step> {
    return this.db.transaction().execute(async (trx) => {
      const move = await this.#lock(trx, tenantId, id);
      if (!move) return 'busy';
      const rows = await nextRowsNewestFirst(trx, 'leads', tenantId, move, BATCH_ROWS);
      if (rows.length > 0) {
        await sql`
          with locked as (
            select id as locked_id, to_jsonb(leads) as old_row from leads
            where ${this.#held(tenantId, move)} and id = any (${rows.map((row) => row.id)}::uuid[])
            for update
          ), written as (
            update leads set pipeline_id = ${move.toPipeline}::uuid, status = ${move.toStage},
              updated_at = clock_timestamp(), version = version + 1
            from locked where leads.tenant_id = ${tenantId} and leads.id = locked.locked_id
            returning leads.*
          )
          insert into events (tenant_id, type, object_id, token_id, request_id, object, previous)
          select w.tenant_id,
            case when l.old_row ->> 'status' is distinct from w.status then 'lead.status_changed' else 'lead.updated' end,
            w.id, ${move.tokenId}::uuid, ${move.requestId}::text, to_jsonb(w),
            (select coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb) from jsonb_each(l.old_row) o
              where o.key in ('status', 'pipeline_id') and o.value is distinct from to_jsonb(w) -> o.key)
          from written as w join locked as l on l.locked_id = w.id`.execute(trx);
      }
      const last = rows.at(-1);
      if (rows.length < BATCH_ROWS || !last) return 'walked';
      await sql`
        update pipeline_moves set after_created_at = ${last.createdAt}, after_id = ${last.id}::uuid
        where tenant_id = ${tenantId} and id = ${id}`.execute(trx);
      return 'more';
    });
  }
}
