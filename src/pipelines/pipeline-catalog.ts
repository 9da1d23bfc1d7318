import { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.js';
import type { PipelineRepository } from './pipeline.repository.js';
import type { Stage } from './pipeline.types.js';
import { isPlacementRefusal, TenantPipelines } from './tenant-pipelines.js';

/**
 * How long an instance goes on with the pipelines it read before another instance's change: a
 * stage removed elsewhere is refused here within this, and the moves of its leads look again after
 * it (PipelineMoves). The README promises 5 s.
 */
export const PIPELINE_CACHE_TTL_MS = 2_000;

/**
 * Each tenant's pipelines, read once and kept a moment: every lead write checks its status against
 * them, and reading them at each write would add a round trip to it (SPEC §20). This instance's
 * own changes drop them at once. A tenant that has none yet (made before pipelines, or by another
 * way than the admin API) gets its first one here, from FUNIL_LEAD_STATUSES.
 */
export class PipelineCatalog {
  readonly #known = new LRUCache<string, TenantPipelines>({
    max: 20_000,
    ttl: PIPELINE_CACHE_TTL_MS,
    ttlAutopurge: false,
  });
  /** Bumped by each forget, so that a read that began before a change does not store what it read. */
  readonly #generations = new LRUCache<string, number>({ max: 20_000 });

  constructor(
    private readonly repository: PipelineRepository,
    /** The stages of a tenant's first pipeline (FUNIL_LEAD_STATUSES). */
    readonly firstStages: readonly Stage[],
  ) {}

  async of(handle: Db, tenantId: string, fresh = false): Promise<TenantPipelines> {
    if (fresh) this.forget(tenantId);
    const known = this.#known.get(tenantId);
    if (known) return known;
    const generation = this.#generations.get(tenantId);
    let pipelines = await this.repository.list(handle, tenantId);
    if (pipelines.length === 0) {
      await this.repository.ensureFirst(handle, tenantId, this.firstStages);
      pipelines = await this.repository.list(handle, tenantId);
    }
    const read = new TenantPipelines(pipelines);
    if (this.#generations.get(tenantId) === generation) this.#known.set(tenantId, read);
    return read;
  }

  /**
   * `use` with the tenant's pipelines as known here; when it refuses a pipeline or a status (one
   * made, or a stage added, on another instance a moment ago), with them read afresh.
   */
  async using<T>(handle: Db, tenantId: string, use: (pipelines: TenantPipelines) => T | Promise<T>): Promise<T> {
    try {
      return await use(await this.of(handle, tenantId));
    } catch (error) {
      if (!isPlacementRefusal(error)) throw error;
      return use(await this.of(handle, tenantId, true));
    }
  }

  forget(tenantId: string): void {
    this.#known.delete(tenantId);
    this.#generations.set(tenantId, (this.#generations.get(tenantId) ?? 0) + 1);
  }
}
