import type { CustomerService } from '../customers/customer.service.js';
import type { EventSchemas } from '../events/event.schemas.js';
import type { EventService } from '../events/event.service.js';
import type { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import type { LeadSchemas } from '../leads/lead.schemas.js';
import type { LeadService } from '../leads/lead.service.js';
import type { PipelineCatalog } from '../pipelines/pipeline-catalog.js';

/** What the MCP tools call: the same services as the REST routes (the composition root's). */
export interface McpServices {
  readonly leads: LeadService;
  readonly customers: CustomerService;
  readonly events: EventService;
  /** FUNIL_LEAD_STATUSES, the stages of a tenant's first pipeline. */
  readonly leadStatuses: readonly string[];
  /** Each tenant's pipelines (SPEC §20). */
  readonly pipelineCatalog: PipelineCatalog;
  readonly leadSchemas: LeadSchemas;
  readonly eventSchemas: EventSchemas;
  /** The REST API's Idempotency-Key records: a key is spent once, whichever way it came. */
  readonly idempotency: IdempotencyRepository;
}
