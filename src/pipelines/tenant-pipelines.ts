import { ApiError, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { pipelinePhrases } from './pipeline.messages.js';
import type { Pipeline, Stage } from './pipeline.types.js';

/**
 * One tenant's pipelines as a write checks a lead against them (SPEC §20): which pipeline an id
 * names, the stages of each, which pipelines have a stage key. Made once per read of the tenant's
 * definitions (PipelineCatalog), so a write looks them up in maps.
 */
export class TenantPipelines {
  readonly all: readonly Pipeline[];
  readonly default: Pipeline;
  readonly #byId: ReadonlyMap<string, Pipeline>;
  /** For each stage key, the ids of the pipelines that have it. */
  readonly #holders: ReadonlyMap<string, readonly string[]>;

  constructor(pipelines: readonly Pipeline[]) {
    const first = pipelines[0];
    if (!first) throw new Error('a tenant has at least one pipeline');
    this.all = pipelines;
    this.default = pipelines.find((pipeline) => pipeline.default) ?? first;
    this.#byId = new Map(pipelines.map((pipeline) => [pipeline.id, pipeline]));
    const holders = new Map<string, string[]>();
    for (const pipeline of pipelines) {
      for (const stage of pipeline.stages) holders.set(stage.key, [...(holders.get(stage.key) ?? []), pipeline.id]);
    }
    this.#holders = holders;
  }

  find(id: string): Pipeline | undefined {
    return this.#byId.get(id);
  }

  /** The pipeline a body names, or a 400 naming `pipeline`. */
  named(id: string): Pipeline {
    const pipeline = this.#byId.get(id);
    if (!pipeline) {
      throw validationFailed([
        { field: 'pipeline', message: fieldMessage('pipeline', pipelinePhrases.notAPipeline()) },
      ]);
    }
    return pipeline;
  }

  /** `status` when it is a stage of `pipeline`; else a 400 naming `status` with the pipeline's keys. */
  stageIn(pipeline: Pipeline, status: string): string {
    if (pipeline.stages.some((stage) => stage.key === status)) return status;
    throw statusRefused(pipeline);
  }

  /**
   * The pipelines a lead may be in to take `status`: undefined when every pipeline has it (no
   * condition needed), empty when none has.
   */
  holdersOf(status: string): readonly string[] | undefined {
    const holders = this.#holders.get(status) ?? [];
    return holders.length === this.all.length ? undefined : holders;
  }

  /** Every stage key of the tenant, each once, in board order of its pipelines. */
  keys(): string[] {
    return [...this.#holders.keys()];
  }

  /** The stage a converted lead moves to (SPEC §13): its pipeline's first of kind `won`, if any. */
  static firstWon(pipeline: Pipeline): Stage | undefined {
    return pipeline.stages.find((stage) => stage.kind === 'won');
  }
}

/** The 400 of a status that is not a stage of the lead's pipeline, its keys in the message. */
export function statusRefused(pipeline: Pipeline) {
  return keysRefused(pipeline.stages.map((stage) => stage.key));
}

/** The 400 of a status that is none of `keys`. */
export function keysRefused(keys: readonly string[]) {
  return validationFailed([{ field: 'status', message: fieldMessage('status', fieldMessages.oneOf(keys)) }]);
}

/**
 * Whether `error` refuses a lead's pipeline or status: what pipelines read afresh might allow (one
 * made, or a stage added, on another instance a moment ago).
 */
export function isPlacementRefusal(error: unknown): boolean {
  if (!(error instanceof ApiError) || error.statusCode !== 400) return false;
  const field = error.details?.[0]?.field;
  return field === 'status' || field === 'pipeline';
}
