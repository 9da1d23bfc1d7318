import type { FastifyBaseLogger } from 'fastify';
import { TokenRepository } from './auth/token.repository.js';
import { TokenAuthenticator } from './auth/token-authenticator.js';
import type { Config } from './config.js';
import { customerFields } from './customers/customer.fields.js';
import { CreateCustomer, Customer } from './customers/customer.schemas.js';
import { CustomerService } from './customers/customer.service.js';
import type { Database, Db } from './db/database.js';
import { eventSchemas } from './events/event.schemas.js';
import { EventService } from './events/event.service.js';
import { EventFilters } from './events/event-filters.js';
import { exportEventFields, importEventFields } from './events/job-event-fields.js';
import { ExportObject } from './exports/export.schemas.js';
import { ExportRequests } from './exports/export-request.js';
import { exportResources } from './exports/export-resource-specs.js';
import { ExportRuns } from './exports/export-runs.js';
import { CustomFieldRepository } from './fields/custom-field.repository.js';
import { CustomFieldService } from './fields/custom-field.service.js';
import { CustomFieldCatalog } from './fields/custom-field-catalog.js';
import { CustomValueRemoval } from './fields/custom-value-removal.js';
import { IdempotencyRepository } from './idempotency/idempotency.repository.js';
import { ImportObject } from './imports/import.schemas.js';
import { ImportService } from './imports/import.service.js';
import { IMPORT_QUEUE, ImportJobs, type TenantTurn } from './imports/import-jobs.js';
import { ImportRowReader } from './imports/import-rows.js';
import { JobQueue } from './jobs/job-queue.js';
import { leadFields } from './leads/lead.fields.js';
import { leadMessages } from './leads/lead.messages.js';
import { leadSchemas } from './leads/lead.schemas.js';
import { LeadService } from './leads/lead.service.js';
import { MergeService } from './merges/merge.service.js';
import { PipelineRepository } from './pipelines/pipeline.repository.js';
import { PipelineObject } from './pipelines/pipeline.schemas.js';
import { PipelineService } from './pipelines/pipeline.service.js';
import { stagesOf } from './pipelines/pipeline.types.js';
import { PipelineCatalog } from './pipelines/pipeline-catalog.js';
import { pipelineEventFields } from './pipelines/pipeline-event-fields.js';
import { PipelineMoves } from './pipelines/pipeline-moves.js';
import { PersonalDataRepository } from './privacy/personal-data.repository.js';
import { PersonalDataService } from './privacy/personal-data.service.js';
import { MatchKeyBackfill } from './records/match-key-backfill.js';
import { MatchKeyRules } from './records/match-key-rules.js';
import { defaultListScanRows } from './records/scan-window.js';
import { ATTEMPT_QUEUE, AttemptQueue } from './webhooks/attempt-queue.js';
import { SecretBox } from './webhooks/secret-box.js';
import { WebhookRepository } from './webhooks/webhook.repository.js';
import { WebhookService } from './webhooks/webhook.service.js';

/** The longest a DELETE of a custom field (or a change of pipelines) waits for its values to be gone (its leads moved) before it answers. */
const REMOVAL_WAIT_MS = 2_000;

export interface ServiceDependencies {
  database: Database;
  config: Config;
  logger: FastifyBaseLogger;
  /** How background work of a tenant takes its turn among its requests (the app's fair share); at once when absent. */
  tenantTurn?: TenantTurn;
}

/**
 * The composition root: the one place that builds repositories and services, each once, from the
 * database, the settings and the logger. The REST routes, the MCP tools and the background jobs
 * (workers.ts) are handed these instances, so a rule, an event or a cache (the tenants' own
 * fields) is the same for all of them.
 */
export function buildServices({ database, config, logger, tenantTurn }: ServiceDependencies) {
  const { db } = database;
  const scanRows = config.listScanRows ?? defaultListScanRows(database.backend);
  const { catalog, pipelineCatalog, pipelineRepository, matchKeys, leads, customers } = buildRecordServices(db, {
    statuses: config.leadStatuses,
    scanRows,
  });
  const schemas = leadSchemas;
  const events = new EventService({
    lead: leadFields,
    customer: customerFields,
    pipeline: pipelineEventFields,
    import: importEventFields,
    export: exportEventFields,
  });
  // The fields a filter may test are those of each kind of object the events carry (SPEC §22).
  const eventFilters = new EventFilters({
    lead: Object.keys(schemas.Lead.properties),
    customer: Object.keys(Customer.properties),
    pipeline: Object.keys(PipelineObject.properties),
    import: Object.keys(ImportObject.properties),
    export: Object.keys(ExportObject.properties),
  });
  const pipelineMoves = new PipelineMoves(db, logger);
  const matchKeyBackfill = new MatchKeyBackfill(db, logger, matchKeys);
  const fieldValueRemoval = new CustomValueRemoval(db, logger);
  const idempotency = new IdempotencyRepository(db);
  const webhookRepository = new WebhookRepository();
  const secrets = new SecretBox(db, config.webhooks.secretKey);
  const jobQueue = new JobQueue(database, config.databaseUrl, config.webhooks.deliver, logger, [
    ATTEMPT_QUEUE,
    IMPORT_QUEUE,
  ]);
  const attemptQueue = new AttemptQueue(jobQueue);
  const importTargets = {
    lead: {
      writer: leads,
      rows: new ImportRowReader(schemas.CreateLead, leadMessages.leadRequired),
      customFields: catalog.forResource('lead'),
    },
    customer: {
      writer: customers,
      rows: new ImportRowReader(CreateCustomer, undefined),
      customFields: catalog.forResource('customer'),
    },
  };
  const importJobs = new ImportJobs(database, jobQueue, importTargets, logger, tenantTurn, IMPORT_STEP_ROWS);
  const imports = new ImportService(importTargets, importJobs);
  const exports = exportResources(leads, customers, schemas.Lead, Customer);
  return {
    /** Who a bearer token is, cached per instance (auth/token-authenticator.ts). */
    authenticator: new TokenAuthenticator(new TokenRepository(db)),
    /**
     * The database's own handle, for work of no request (retention, bookkeeping). A request's work
     * runs on `request.db`, which every service method takes as its first argument.
     */
    db,
    leadSchemas: schemas,
    /** The change feed's event, with the lead, the customer, the pipeline, the import and the export. */
    eventSchemas: eventSchemas(schemas.Lead, Customer, PipelineObject, ImportObject, ExportObject),
    leads,
    customers,
    events,
    /** SPEC §22's filters of the feed and of webhooks: their checks, and each compiled once. */
    eventFilters,
    /** One copy of each tenant's fields, which the routes that change them keep current. */
    catalog,
    fields: new CustomFieldService(
      new CustomFieldRepository(),
      catalog,
      fieldValueRemoval,
      Math.min(REMOVAL_WAIT_MS, config.requestTimeoutMs / 2),
    ),
    fieldValueRemoval,
    /** One copy of each tenant's pipelines, which every lead write checks its status against. */
    pipelineCatalog,
    pipelineRepository,
    pipelineMoves,
    matchKeyBackfill,
    pipelines: new PipelineService(
      pipelineRepository,
      pipelineCatalog,
      pipelineMoves,
      Math.min(REMOVAL_WAIT_MS, config.requestTimeoutMs / 2),
    ),
    merges: new MergeService(
      {
        lead: { service: leads, scopes: ['leads:read', 'leads:write'] },
        customer: { service: customers, scopes: ['customers:read', 'customers:write'] },
      },
      config.eventRetentionDays,
    ),
    importJobs,
    imports,
    personalData: new PersonalDataService(leads, customers, events, new PersonalDataRepository(), idempotency, [
      imports,
    ]),
    idempotency,
    webhookRepository,
    secrets,
    /** SPEC §15's job queue, for every kind of job (pg-boss). */
    jobQueue,
    attemptQueue,
    webhooks: new WebhookService(webhookRepository, attemptQueue, secrets, config.webhooks, eventFilters),
    /** SPEC §23: what an export reads of each resource, its request's checks, and its background runs. */
    exportResources: exports,
    exportRequests: new ExportRequests(exports, catalog),
    exportRuns: new ExportRuns(database, exports, catalog, logger),
  };
}

export type Services = ReturnType<typeof buildServices>;

/**
 * The lead and customer services alone, on `db` (buildServices builds them so too): for tools
 * that only write and read records, such as the benches. `statuses`: the stages of a tenant's
 * first pipeline (FUNIL_LEAD_STATUSES); `scanRows`: the most rows a filtered list page reads.
 */
export function buildRecordServices(
  db: Db,
  { statuses, scanRows }: { statuses: readonly string[]; scanRows: number | undefined },
) {
  const catalog = new CustomFieldCatalog(new CustomFieldRepository());
  const pipelineRepository = new PipelineRepository();
  const pipelineCatalog = new PipelineCatalog(pipelineRepository, stagesOf(statuses));
  const matchKeys = new MatchKeyRules();
  const customers = new CustomerService({ db, scanRows, catalog, matchKeys });
  const leads = new LeadService({ db, pipelines: pipelineCatalog, scanRows, catalog, customers, matchKeys });
  customers.onDelete = (trx, actor, id) => leads.unlinkCustomer(trx, actor, id);
  return { catalog, pipelineCatalog, pipelineRepository, matchKeys, leads, customers };
}

/**
 * Rows an import applies in one transaction (SPEC §23: at most 1,000). A request arriving during a
 * step shares the machine with it until it ends (on the embedded database, waits for it: the step
 * holds its one connection), so steps are small. bench/imports.ts, a quiet tenant's p95 during a
 * 200,000-row import on PostgreSQL against idle, steps starting when no request is answered
 * (http/answering.ts): 2.7× with steps of 250 (8,400 rows/s), 1.9× of 100 (6,600), 1.4–1.6× of 50
 * (5,700–5,900), 1.5× of 25 (3,800).
 */
const IMPORT_STEP_ROWS = 50;
