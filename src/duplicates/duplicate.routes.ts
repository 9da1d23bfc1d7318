import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { Scope } from '../auth/scopes.js';
import { principalOf } from '../http/authenticate.js';
import { setNextPage } from '../http/next-page.js';
import { answer, errorResponses, IdParams } from '../http/schemas.js';
import type { CursorCodec } from '../records/cursor.js';
import { type DuplicateRecords, duplicateGroupPage, duplicatesOfRecord } from './duplicate.list.js';
import {
  DuplicateGroupList,
  type DuplicateGroupsQuery,
  duplicatesOfSchema,
  DuplicateGroupsQuery as GroupsQuery,
} from './duplicate.schemas.js';

/** What the duplicate routes of a resource read through. */
export interface DuplicateResource extends DuplicateRecords {
  readonly noun: string;
  readonly readScope: Scope;
  readonly object: TSchema;
}

interface DuplicateRoutesOptions {
  resources: readonly DuplicateResource[];
  cursors: CursorCodec;
}

/** SPEC §21: the records of a tenant that share a matching key, as groups, and those of one record. */
export const duplicateRoutes: FastifyPluginAsync<DuplicateRoutesOptions> = async (app, { resources, cursors }) => {
  for (const resource of resources) {
    const path = `/${resource.table}`;
    const tags = [resource.table];
    app.get(
      `${path}/duplicates`,
      {
        schema: {
          operationId: `list${resource.noun}Duplicates`,
          summary: `Groups of ${resource.table} that share an e-mail or a phone`,
          description:
            'Largest first, then by kind and key; keyset paged (X-Next-Cursor, Link). The keys are the normalised ' +
            'e-mail (trimmed, lower-cased, without a +tag; Gmail without dots) and the phone in E.164: see ' +
            '`phoneCountry`.',
          tags,
          querystring: GroupsQuery,
          response: { 200: answer(DuplicateGroupList, 'A page of groups.'), ...errorResponses(400, 403) },
        },
        config: { scope: resource.readScope },
      },
      async (request, reply) => {
        const { kind, limit = 100, cursor } = request.query as DuplicateGroupsQuery;
        const { tenantId } = principalOf(request);
        const page = { kind, limit, cursor };
        const { items, next } = await duplicateGroupPage(request.db, cursors, resource.table, tenantId, page);
        if (next) setNextPage(request, reply, next);
        return items;
      },
    );

    app.get(
      `${path}/:id/duplicates`,
      {
        schema: {
          operationId: `get${resource.noun}Duplicates`,
          summary: `The ${resource.table} that share an e-mail or a phone with one`,
          description: 'Newest first, at most 100, each with the keys it shares.',
          tags,
          params: IdParams,
          response: {
            200: answer(duplicatesOfSchema(resource.object), `The ${resource.table} that share a key with it.`),
            ...errorResponses(403, 404),
          },
        },
        config: { scope: resource.readScope, notFoundText: resource.notFoundText },
      },
      async (request: FastifyRequest) => {
        const { id } = request.params as IdParams;
        return duplicatesOfRecord(request.db, resource, principalOf(request).tenantId, id);
      },
    );
  }
};
