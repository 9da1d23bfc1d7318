/** SPEC §20: what a stage's kind says: still in play, or one of the two ends. */
export const STAGE_KINDS = ['open', 'won', 'lost'] as const;
export type StageKind = (typeof STAGE_KINDS)[number];

export interface Stage {
  readonly key: string;
  readonly label: string;
  readonly kind: StageKind;
}

/** A pipeline as the API shows it. */
export interface Pipeline {
  readonly id: string;
  readonly name: string;
  readonly default: boolean;
  readonly stages: readonly Stage[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

export const PIPELINE_LIMITS = { pipelinesPerTenant: 20, stagesPerPipeline: 50 } as const;

/** A new stage's key (SPEC §20). */
export const STAGE_KEY_PATTERN = '^[a-z][a-z0-9_]{0,39}$';
/**
 * A key a pipeline may already hold: FUNIL_LEAD_STATUSES accepted these before pipelines were
 * data, and the tenants' first pipelines were made from it. Such a key is kept when a pipeline is
 * changed; a new one follows STAGE_KEY_PATTERN.
 */
export const KEPT_STAGE_KEY_PATTERN = '^[a-z0-9_-]{1,50}$';

/** The name of the pipeline every tenant starts with. */
export const FIRST_PIPELINE_NAME = 'Pipeline';

/**
 * The stages of a tenant's first pipeline, from FUNIL_LEAD_STATUSES (or SPEC §3's seven): `won`
 * and `lost` of their kinds, the rest open; the label is the key.
 */
export function stagesOf(statuses: readonly string[]): Stage[] {
  return statuses.map((key) => ({ key, label: key, kind: key === 'won' || key === 'lost' ? key : 'open' }));
}

/**
 * How a lead's row holds its pipeline: null for the tenant's first one, whose id is the tenant's
 * (migration 2026-11-28T1000), the id for any other.
 */
export function storedPipeline(tenantId: string, pipelineId: string): string | null {
  return pipelineId === tenantId ? null : pipelineId;
}
