import type { FastifyPluginAsync } from 'fastify';
import { actorOf, principalOf } from '../http/authenticate.js';
import { answer, errorResponses, IdParams } from '../http/schemas.js';
import type { PipelineCatalog } from '../pipelines/pipeline-catalog.js';
import type { CursorCodec } from '../records/cursor.js';
import { registerRecordRoutes } from '../records/record.routes.js';
import { LeadListQuery, leadListRequest } from './lead.list.js';
import { leadMessages } from './lead.messages.js';
import { LEAD_SORT_KEYS } from './lead.repository.js';
import { leadSchemas } from './lead.schemas.js';
import type { ConvertLeadInput, LeadService } from './lead.service.js';
import { leadSummary } from './lead-summary.js';
import { LeadSummary, LeadSummaryQuery } from './lead-summary.schemas.js';

interface LeadRoutesOptions {
  leads: LeadService;
  /** Each tenant's pipelines (the summary counts one). */
  pipelines: PipelineCatalog;
  cursors: CursorCodec;
}

export const leadRoutes: FastifyPluginAsync<LeadRoutesOptions> = async (
  app,
  { leads: service, pipelines, cursors },
) => {
  const schemas = leadSchemas;
  registerRecordRoutes(app, {
    cursors,
    service,
    path: 'leads',
    noun: 'Lead',
    scopes: { read: 'leads:read', write: 'leads:write', create: 'leads:create' },
    notFoundText: leadMessages.leadNotFound,
    schemas: {
      object: schemas.Lead,
      list: schemas.LeadList,
      listQuery: LeadListQuery,
      create: schemas.CreateLead,
      update: schemas.UpdateLead,
      status: schemas.UpdateLeadStatus,
    },
    listRequest: (query) => leadListRequest(query as LeadListQuery),
    sortKeys: LEAD_SORT_KEYS,
    statusSummary: 'Move a lead to another pipeline stage',
    conflictText:
      'another lead has this `externalId` (`existingId` names it, to a token that may read leads); e-mails of leads ' +
      'need not be unique',
    requiredFieldText: leadMessages.leadRequired,
  });

  app.get(
    '/leads/summary',
    {
      schema: {
        operationId: 'getLeadSummary',
        summary: 'A pipeline in numbers: leads by stage, by source, per day',
        description:
          'The leads of a pipeline (default: the default one) created in a period (default: the last 30 UTC days; at ' +
          'most 366 days), optionally of one source: their total, their count at each stage in board order with its ' +
          'kind (every stage, zeros included), by ' +
          'source (largest first; no source is `null`) and per UTC day (every day of the period).',
        tags: ['leads'],
        querystring: LeadSummaryQuery,
        response: { 200: answer(LeadSummary, 'The counts and sums asked for.'), ...errorResponses(400, 403) },
      },
      config: { scope: 'leads:read' },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return pipelines.using(request.db, tenantId, (known) =>
        leadSummary(request.db, tenantId, known, request.query as LeadSummaryQuery),
      );
    },
  );

  app.post(
    '/leads/:id/convert',
    {
      schema: {
        operationId: 'convertLead',
        summary: 'Convert a lead into a customer',
        description:
          "In one transaction: links the customer with the lead's e-mail, or creates one from the lead (name, e-mail, " +
          "phone and the body's fields); sets the lead's `customerId` and moves it to its pipeline's first stage of " +
          'kind `won` (when it has one). 201 when the customer was created; 200 when it existed, or the lead was converted already (nothing ' +
          'changes then). A lead without an e-mail is a 400.',
        tags: ['leads'],
        params: IdParams,
        body: schemas.ConvertLead,
        response: {
          200: answer(schemas.LeadConversion, 'The lead and the customer it was linked to (it existed already).'),
          201: answer(schemas.LeadConversion, 'The lead and the customer created from it.'),
          ...errorResponses(400, 403, 404, 413, 415),
        },
      },
      // customers:read too: it may link, and answer, a customer that already holds the e-mail (SPEC §5.6).
      config: {
        scope: ['leads:write', 'customers:write', 'customers:read'],
        notFoundText: leadMessages.leadNotFound,
        optionalBody: true,
      },
      // The body is optional: none is an empty one.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { id } = request.params as IdParams;
      const input = request.body as ConvertLeadInput;
      const { lead, customer, created } = await service.convert(request.db, actorOf(request), id, input);
      reply.code(created ? 201 : 200);
      return { lead: lead.object, customer: customer.object, created };
    },
  );
};
