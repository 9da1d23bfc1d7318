import { setTimeout } from 'node:timers/promises';
import type { Change } from '../auth/caller.js';
import type { Db } from '../db/database.js';
import { inTransaction, lockKey } from '../db/transaction.js';
import { conflict, notFound, validationFailed } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { fieldMessage, messages } from '../shared/messages.js';
import { pipelineMessages, pipelinePhrases } from './pipeline.messages.js';
import type { PipelineChanges, PipelineRepository } from './pipeline.repository.js';
import type { PipelineCreate, PipelineUpdate } from './pipeline.schemas.js';
import { PIPELINE_LIMITS, type Pipeline, STAGE_KEY_PATTERN, type Stage, storedPipeline } from './pipeline.types.js';
import type { PipelineCatalog } from './pipeline-catalog.js';
import type { PipelineMoves } from './pipeline-moves.js';

type Actor = Change & { tenantId: string };

const NEW_KEY = new RegExp(STAGE_KEY_PATTERN);
/** `<pipeline id>:<stage key>`, or a stage key alone. */
const MOVE_TO = /^(?:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):)?(.+)$/i;

/** Where the leads of a removed stage or pipeline go. */
interface MoveTarget {
  readonly pipeline: string;
  readonly stage: string;
}

/**
 * SPEC §20's pipelines: at most 20 per tenant and 50 stages each, keys unique in a pipeline, one
 * default per tenant. The changes of one tenant's pipelines take turns (a lock per tenant), so the
 * limits and the one default hold under concurrency. Each change drops this instance's copy of the
 * tenant's pipelines (PipelineCatalog) once committed; other instances' copies expire within
 * seconds. Removing a stage or a pipeline that holds leads needs `moveTo`: its leads are then moved
 * by PipelineMoves, in batches, after the change commits.
 */
export class PipelineService {
  constructor(
    private readonly repository: PipelineRepository,
    private readonly catalog: PipelineCatalog,
    private readonly moves: PipelineMoves,
    /** How long a change that moves leads waits for them to be moved before it answers (the rest goes on after). */
    private readonly moveWaitMs: number,
  ) {}

  /** The tenant's pipelines, read from the database (and this instance's copy of them renewed). */
  async list(handle: Db, tenantId: string): Promise<readonly Pipeline[]> {
    return (await this.catalog.of(handle, tenantId, true)).all;
  }

  async find(handle: Db, tenantId: string, id: string): Promise<Pipeline> {
    const found = (await this.catalog.of(handle, tenantId, true)).find(id);
    if (!found) throw notFound(pipelineMessages.pipelineNotFound);
    return found;
  }

  async create(handle: Db, actor: Actor, input: PipelineCreate): Promise<Pipeline> {
    const stages = checkedStages(input.stages, []);
    const created = await this.#changing(handle, actor.tenantId, async (trx) => {
      if ((await this.repository.count(trx, actor.tenantId)) >= PIPELINE_LIMITS.pipelinesPerTenant) {
        throw conflict(pipelineMessages.tooMany(PIPELINE_LIMITS.pipelinesPerTenant));
      }
      if (input.default) await this.#undefault(trx, actor);
      return this.repository.insert(trx, actor, { name: input.name, stages, isDefault: input.default === true });
    });
    this.catalog.forget(actor.tenantId);
    return created;
  }

  async update(
    handle: Db,
    actor: Actor,
    id: string,
    input: PipelineUpdate,
    moveTo: string | undefined,
  ): Promise<Pipeline> {
    const { tenantId } = actor;
    const changes: PipelineChanges = {};
    if (input.name !== undefined) changes.name = input.name;
    let moved: string[] = [];
    const updated = await this.#changing(handle, tenantId, async (trx) => {
      const current = (await this.repository.find(trx, tenantId, id)) ?? throwNotFound();
      if (input.default === false && current.default) {
        throw validationFailed([{ field: 'default', message: fieldMessage('default', pipelinePhrases.keepDefault()) }]);
      }
      if (input.default === true && !current.default) {
        await this.#undefault(trx, actor);
        changes.isDefault = true;
      }
      if (input.stages !== undefined) {
        const stages = checkedStages(input.stages, current.stages);
        changes.stages = stages;
        const kept = new Set(stages.map((stage) => stage.key));
        const removed = current.stages.map((stage) => stage.key).filter((key) => !kept.has(key));
        moved = await this.#moveOut(trx, actor, { ...current, stages }, removed, moveTo, id);
      }
      if (Object.keys(changes).length === 0 && input.default === undefined) {
        throw validationFailed([], messages.emptyUpdate);
      }
      return (await this.repository.update(trx, actor, id, changes)) ?? throwNotFound();
    });
    this.catalog.forget(tenantId);
    await this.#waitForMoves(tenantId, moved);
    return updated;
  }

  async delete(handle: Db, actor: Actor, id: string, moveTo: string | undefined): Promise<void> {
    const { tenantId } = actor;
    let moved: string[] = [];
    await this.#changing(handle, tenantId, async (trx) => {
      const current = (await this.repository.find(trx, tenantId, id)) ?? throwNotFound();
      if (current.default) throw conflict(pipelineMessages.defaultNotDeleted);
      const held = await this.repository.leadsIn(trx, tenantId, id);
      if (held > 0) {
        if (moveTo === undefined)
          throw conflict(pipelineMessages.pipelineHoldsLeads(held), { extra: { leadCount: held } });
        const pipelines = await this.repository.list(trx, tenantId);
        const target = moveTarget(moveTo, pipelines, (pipelines.find((pipeline) => pipeline.default) as Pipeline).id);
        if (target.pipeline === id) throw badMoveTo();
        moved = [await this.#recordMove(trx, actor, id, null, target)];
      }
      await this.repository.delete(trx, actor, id);
    });
    this.catalog.forget(tenantId);
    await this.#waitForMoves(tenantId, moved);
  }

  /** `work` in a transaction that holds the tenant's pipelines lock, the tenant's first pipeline made if it had none. */
  async #changing<T>(handle: Db, tenantId: string, work: (trx: Db) => Promise<T>): Promise<T> {
    return inTransaction(handle, async (trx) => {
      await lockKey(trx, `${tenantId}|pipelines`);
      await this.repository.ensureFirst(trx, tenantId, this.catalog.firstStages);
      return work(trx);
    });
  }

  async #undefault(trx: Db, actor: Actor): Promise<void> {
    const current = await this.repository.lockDefault(trx, actor.tenantId);
    if (current) await this.repository.update(trx, actor, current, { isDefault: false });
  }

  /**
   * The moves of the leads in the stages `removed` of `pipeline` (as it is after the change): a 409
   * with their count when they have leads and `moveTo` is absent; the ids of the moves recorded.
   */
  async #moveOut(
    trx: Db,
    actor: Actor,
    pipeline: Pipeline,
    removed: readonly string[],
    moveTo: string | undefined,
    id: string,
  ): Promise<string[]> {
    if (removed.length === 0) return [];
    const { tenantId } = actor;
    const held = await this.repository.leadsIn(trx, tenantId, id, removed);
    if (held === 0) return [];
    if (moveTo === undefined) {
      throw conflict(pipelineMessages.stagesHoldLeads(held, removed), { extra: { leadCount: held } });
    }
    const others = (await this.repository.list(trx, tenantId)).map((other) => (other.id === id ? pipeline : other));
    const target = moveTarget(moveTo, others, id);
    if (target.pipeline === id && removed.includes(target.stage)) throw badMoveTo();
    const moves: string[] = [];
    for (const stage of removed) moves.push(await this.#recordMove(trx, actor, id, stage, target));
    return moves;
  }

  async #recordMove(trx: Db, actor: Actor, from: string, stage: string | null, target: MoveTarget): Promise<string> {
    const { tenantId } = actor;
    const id = newId();
    await trx
      .insertInto('pipelineMoves')
      .values({
        tenantId,
        id,
        fromPipeline: storedPipeline(tenantId, from),
        fromStage: stage,
        toPipeline: storedPipeline(tenantId, target.pipeline),
        toStage: target.stage,
        afterCreatedAt: null,
        afterId: null,
        tokenId: actor.tokenId ?? null,
        requestId: actor.requestId ?? null,
      })
      .execute();
    return id;
  }

  /** Starts the moves and waits a moment for them (most tenants' are done by then); the rest go on after the answer. */
  async #waitForMoves(tenantId: string, moves: readonly string[]): Promise<void> {
    if (moves.length === 0) return;
    const walked = Promise.all(moves.map((id) => this.moves.start(tenantId, id).walked));
    const waiting = new AbortController();
    await Promise.race([walked, setTimeout(this.moveWaitMs, undefined, { signal: waiting.signal }).catch(() => {})]);
    waiting.abort();
  }
}

/**
 * A pipeline's stages as given, checked: keys unique, and a key the pipeline did not have (in
 * `current`) of the new keys' pattern (a kept one may be a former FUNIL_LEAD_STATUSES's).
 */
function checkedStages(stages: readonly Stage[], current: readonly Stage[]): Stage[] {
  const keys = stages.map((stage) => stage.key);
  if (new Set(keys).size !== keys.length) {
    throw validationFailed([{ field: 'stages', message: fieldMessage('stages', pipelinePhrases.keysUnique()) }]);
  }
  const had = new Set(current.map((stage) => stage.key));
  const index = stages.findIndex((stage) => !had.has(stage.key) && !NEW_KEY.test(stage.key));
  if (index >= 0) {
    const field = `stages.${index}.key`;
    throw validationFailed([{ field, message: fieldMessage(field, pipelinePhrases.newKey(STAGE_KEY_PATTERN)) }]);
  }
  return stages.map(({ key, label, kind }) => ({ key, label, kind }));
}

/** `moveTo` as a pipeline and a stage of it; a bare key is a stage of `home`. A 400 naming `moveTo` otherwise. */
function moveTarget(moveTo: string, pipelines: readonly Pipeline[], home: string): MoveTarget {
  const [, named, stage] = MOVE_TO.exec(moveTo) ?? [];
  const pipeline = pipelines.find((candidate) => candidate.id === (named?.toLowerCase() ?? home));
  if (!pipeline?.stages.some((candidate) => candidate.key === stage)) throw badMoveTo();
  return { pipeline: pipeline.id, stage: stage as string };
}

function badMoveTo() {
  return validationFailed([{ field: 'moveTo', message: fieldMessage('moveTo', pipelinePhrases.notATarget()) }]);
}

function throwNotFound(): never {
  throw notFound(pipelineMessages.pipelineNotFound);
}
