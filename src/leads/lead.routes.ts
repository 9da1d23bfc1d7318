import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { isCheckViolation } from '../db/errors.js';
import { principalOf } from '../http/authenticate.js';
import type { CursorCodec } from '../http/cursor.js';
import { notFound, validationFailed } from '../http/errors.js';
import { expectedVersions, IfMatchHeaders, setEtag } from '../http/etag.js';
import { listPage } from '../http/list-query.js';
import { fieldMessage, fieldMessages, messages } from '../http/messages.js';
import { errorResponses, IdParams, SuccessBody } from '../http/schemas.js';
import { LeadListQuery, leadListRequest } from './lead.list.js';
import { leadChanges, toLead, toLeadListItem } from './lead.mapper.js';
import { LEAD_SORT_KEYS, LeadRepository, type LeadValues } from './lead.repository.js';
import { leadSchemas } from './lead.schemas.js';

const notFoundText = messages.leadNotFound;
const tags = ['leads'];

interface LeadRoutesOptions {
  db: Db;
  config: Config;
  cursors: CursorCodec;
}

export const leadRoutes: FastifyPluginAsync<LeadRoutesOptions> = async (fastify, { db, config, cursors }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const leads = new LeadRepository(db);
  const schemas = leadSchemas(config.leadStatuses);
  const defaultStatus = config.leadStatuses[0] as string;

  app.get(
    '/leads',
    {
      schema: {
        operationId: 'listLeads',
        summary: 'List leads',
        description:
          'A page of leads, newest first unless `sort` says otherwise. While more rows exist, the answer carries ' +
          '`Link: <next page URL>; rel="next"` and `X-Next-Cursor`.',
        tags,
        querystring: LeadListQuery,
        response: { 200: schemas.LeadList, ...errorResponses(400, 403) },
      },
      config: { scope: 'leads:read' },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const { sort, filters, limit } = leadListRequest(request.query, config.leadStatuses);
      return listPage(request, reply, cursors, {
        tenantId,
        sort: request.query.sort ?? '-createdAt',
        key: LEAD_SORT_KEYS[sort.field],
        descending: sort.descending,
        limit,
        cursor: request.query.cursor,
        filters,
        fetch: async (page) => (await leads.list(tenantId, filters, page)).map(toLeadListItem),
      });
    },
  );

  app.get(
    '/leads/:id',
    {
      schema: {
        operationId: 'getLead',
        summary: 'Get a lead',
        tags,
        params: IdParams,
        response: { 200: schemas.Lead, ...errorResponses(403, 404) },
      },
      config: { scope: 'leads:read', notFoundText },
    },
    async (request, reply) => {
      const row = await leads.find(principalOf(request).tenantId, request.params.id);
      if (!row) throw notFound(notFoundText);
      setEtag(reply, row);
      return toLead(row);
    },
  );

  app.post(
    '/leads',
    {
      schema: {
        operationId: 'createLead',
        summary: 'Create a lead',
        tags,
        body: schemas.CreateLead,
        response: { 201: schemas.Lead, ...errorResponses(400, 403, 413, 415) },
      },
      config: { scope: 'leads:write', requiredFieldText: messages.leadRequired },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const changes = leadChanges(request.body);
      if (changes.email == null && changes.phone == null) {
        throw validationFailed(
          [
            { field: 'email', message: fieldMessage('email', fieldMessages.required()) },
            { field: 'phone', message: fieldMessage('phone', fieldMessages.required()) },
          ],
          messages.leadRequired,
        );
      }
      const values: LeadValues = {
        name: changes.name as string,
        email: changes.email ?? null,
        phone: changes.phone ?? null,
        source: changes.source ?? null,
        status: changes.status ?? defaultStatus,
        score: changes.score ?? 0,
        lastContact: changes.lastContact ?? null,
        notes: changes.notes ?? null,
      };
      const row = await leads.create(principal.tenantId, principal.tokenId, values);
      setEtag(reply, row);
      return reply.code(201).send(toLead(row));
    },
  );

  app.put(
    '/leads/:id/status',
    {
      schema: {
        operationId: 'updateLeadStatus',
        summary: 'Move a lead to another pipeline stage',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: schemas.UpdateLeadStatus,
        response: { 200: schemas.Lead, ...errorResponses(400, 403, 404, 412, 413, 415) },
      },
      config: { scope: 'leads:write', notFoundText },
    },
    async (request, reply) => {
      const row = await leads.update(
        principalOf(request).tenantId,
        request.params.id,
        { status: request.body.status },
        expectedVersions(request),
      );
      if (!row) throw notFound(notFoundText);
      setEtag(reply, row);
      return toLead(row);
    },
  );

  app.put(
    '/leads/:id',
    {
      schema: {
        operationId: 'updateLead',
        summary: 'Update some fields of a lead',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: schemas.UpdateLead,
        response: { 200: schemas.Lead, ...errorResponses(400, 403, 404, 412, 413, 415) },
      },
      config: { scope: 'leads:write', notFoundText },
    },
    async (request, reply) => {
      const changes = leadChanges(request.body);
      if (Object.keys(changes).length === 0) {
        throw validationFailed([], messages.emptyUpdate);
      }
      try {
        const row = await leads.update(
          principalOf(request).tenantId,
          request.params.id,
          changes,
          expectedVersions(request),
        );
        if (!row) throw notFound(notFoundText);
        setEtag(reply, row);
        return toLead(row);
      } catch (error) {
        // The database checks "an e-mail or a phone" on the row as updated, in the same statement.
        if (isCheckViolation(error, 'leads_contact_required')) {
          throw validationFailed(
            [{ field: 'email', message: fieldMessage('email', fieldMessages.required()) }],
            messages.leadContactRequired,
          );
        }
        throw error;
      }
    },
  );

  app.delete(
    '/leads/:id',
    {
      schema: {
        operationId: 'deleteLead',
        summary: 'Delete a lead',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 200: SuccessBody, ...errorResponses(403, 404, 412) },
      },
      config: { scope: 'leads:write', notFoundText },
    },
    async (request) => {
      const deleted = await leads.delete(principalOf(request).tenantId, request.params.id, expectedVersions(request));
      if (!deleted) throw notFound(notFoundText);
      return { success: true as const };
    },
  );
};
