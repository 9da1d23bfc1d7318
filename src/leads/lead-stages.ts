import type { Db } from '../db/database.js';
import { type Pipeline, storedPipeline } from '../pipelines/pipeline.types.js';
import type { PipelineCatalog } from '../pipelines/pipeline-catalog.js';
import { isPlacementRefusal, keysRefused, statusRefused, type TenantPipelines } from '../pipelines/tenant-pipelines.js';
import type { StoredRow } from '../records/record-store.js';
import type { PlacedChanges, StatusCheck, StatusRules } from '../records/status-rules.js';

/**
 * SPEC §20 on every lead write: a lead is in one of its tenant's pipelines (the default unless
 * the body names another) and its status is a stage of that pipeline (the first unless the body
 * names one). The tenant's pipelines come from PipelineCatalog, so a write checks them without a
 * round trip of its own (a refusal is checked again against them read afresh: RecordService); an update that sets only the status cannot know the lead's pipeline
 * before it writes, so the update statement itself requires the lead to be in a pipeline that has
 * the stage (the store's guard), and a refusal names the stages of the lead's own.
 */
export class LeadStages implements StatusRules {
  constructor(private readonly catalog: PipelineCatalog) {}

  async of(handle: Db, tenantId: string, fresh = false): Promise<StatusCheck> {
    return new LeadStageCheck(tenantId, await this.catalog.of(handle, tenantId, fresh));
  }

  refuses(error: unknown): boolean {
    return isPlacementRefusal(error);
  }
}

class LeadStageCheck implements StatusCheck {
  constructor(
    private readonly tenantId: string,
    private readonly pipelines: TenantPipelines,
  ) {}

  create(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const { pipelines } = this;
    const pipeline = values.pipeline == null ? pipelines.default : pipelines.named(values.pipeline as string);
    // Absent: the first stage; "" or null (no value): refused, a lead always has a status.
    const status =
      values.status === undefined ? firstStage(pipeline) : pipelines.stageIn(pipeline, (values.status ?? '') as string);
    return { ...values, pipeline: storedPipeline(this.tenantId, pipeline.id), status };
  }

  update(changes: Readonly<Record<string, unknown>>): PlacedChanges {
    const { pipelines } = this;
    if (changes.pipeline != null) {
      const pipeline = pipelines.named(changes.pipeline as string);
      const placed = { ...changes, pipeline: storedPipeline(this.tenantId, pipeline.id) };
      if (changes.status !== undefined) {
        return { changes: { ...placed, status: pipelines.stageIn(pipeline, (changes.status ?? '') as string) } };
      }
      return {
        changes: placed,
        options: {
          derived: ['stageOfPipeline'],
          params: { pipelineTarget: pipeline.id, firstStage: firstStage(pipeline) },
        },
      };
    }
    if (changes.status === undefined) return { changes };
    // A status no pipeline has is a body at fault, whatever the lead (SPEC §2: before a 404).
    const within = changes.status === null ? [] : pipelines.holdersOf(changes.status as string);
    if (within?.length === 0) throw keysRefused(pipelines.keys());
    return within === undefined ? { changes } : { changes, options: { within } };
  }

  replaced(row: Readonly<Record<string, unknown>>) {
    const own = this.pipelines.find((row.pipeline_id ?? this.tenantId) as string);
    if (own?.stages.some((stage) => stage.key === row.status)) return undefined;
    const pipeline = own ?? this.pipelines.default;
    const placed = { ...row, pipeline_id: storedPipeline(this.tenantId, pipeline.id), status: firstStage(pipeline) };
    return { row: placed, moved: own ? ('status' as const) : ('pipeline' as const) };
  }

  refused(current: StoredRow) {
    const id = (current.pipelineId ?? current.tenantId) as string;
    return statusRefused(this.pipelines.find(id) ?? this.pipelines.default);
  }
}

function firstStage(pipeline: Pipeline): string {
  return (pipeline.stages[0] as { key: string }).key;
}
