import type { CustomerService } from '../customers/customer.service.js';
import type { EventSchemas } from '../events/event.schemas.js';
import type { EventService } from '../events/event.service.js';
import type { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import type { LeadSchemas } from '../leads/lead.schemas.js';
import type { LeadService } from '../leads/lead.service.js';
import type { MergeService } from '../merges/merge.service.js';
import type { PipelineService } from '../pipelines/pipeline.service.js';
import type { PipelineCatalog } from '../pipelines/pipeline-catalog.js';

/** What the MCP tools call: the same services as the REST routes (the composition root's). */
export interface McpServices {
  readonly leads: LeadService;
  readonly customers: CustomerService;
  readonly events: EventService;
  /** Each tenant's pipelines (SPEC §20), kept a moment: what every lead write and tools/list read. */
  readonly pipelineCatalog: PipelineCatalog;
  /** What GET /pipelines calls. */
  readonly pipelines: PipelineService;
  /** What POST /leads/merge calls (SPEC §21). */
  readonly merges: MergeService;
  readonly leadSchemas: LeadSchemas;
  readonly eventSchemas: EventSchemas;
  /** The REST API's Idempotency-Key records: a key is spent once, whichever way it came. */
  readonly idempotency: IdempotencyRepository;
}
