import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { Scope } from '../auth/scopes.js';
import type { Db } from '../db/database.js';
import { principalOf } from '../http/authenticate.js';
import { setNextPage } from '../http/next-page.js';
import { answer, errorResponses, IdParams } from '../http/schemas.js';
import { type CursorCodec, cursorBinding } from '../records/cursor.js';
import type { Stored } from '../records/record.service.js';
import { notFound, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages, type Text } from '../shared/messages.js';
import {
  duplicateGroups,
  duplicatesOf,
  type GroupPosition,
  type MatchKind,
  type RecordTable,
} from './duplicate.repository.js';
import {
  DuplicateGroupList,
  type DuplicateGroupsQuery,
  duplicatesOfSchema,
  DuplicateGroupsQuery as GroupsQuery,
} from './duplicate.schemas.js';

/** What the duplicate routes of a resource read through. */
export interface DuplicateResource {
  readonly table: RecordTable;
  readonly noun: string;
  readonly readScope: Scope;
  readonly object: TSchema;
  readonly notFoundText: Text;
  lookupMany(handle: Db, tenantId: string, ids: readonly string[]): Promise<Stored<unknown>[]>;
}

interface DuplicateRoutesOptions {
  resources: readonly DuplicateResource[];
  cursors: CursorCodec;
}

const KINDS: readonly MatchKind[] = ['email', 'phone'];

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
        const query = request.query as DuplicateGroupsQuery;
        const { tenantId } = principalOf(request);
        const limit = query.limit ?? 100;
        const binding = cursorBinding(tenantId, `duplicates:${resource.table}`, { kind: query.kind });
        const after = query.cursor === undefined ? undefined : positionOf(await cursors.decode(query.cursor, binding));
        const groups = await duplicateGroups(request.db, resource.table, tenantId, {
          kinds: query.kind ? [query.kind] : KINDS,
          after,
          limit: limit + 1,
        });
        const page = groups.slice(0, limit);
        const last = page.at(-1);
        if (groups.length > limit && last) {
          const next = await cursors.encode({ value: last.count, id: `${last.kind}:${last.value}` }, binding);
          setNextPage(request, reply, next);
        }
        return page.map(({ kind, value, count, ids }) => ({ key: { kind, value }, count, ids }));
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
        const { tenantId } = principalOf(request);
        const { id } = request.params as IdParams;
        const matches = await duplicatesOf(request.db, resource.table, tenantId, id);
        if (!matches) throw notFound(resource.notFoundText);
        const records = await resource.lookupMany(
          request.db,
          tenantId,
          matches.map((match) => match.id),
        );
        const byId = new Map(records.map((record) => [(record.object as { _id: string })._id, record.object]));
        return matches.flatMap((match) => {
          const record = byId.get(match.id);
          return record ? [{ matchedOn: match.matchedOn, record }] : [];
        });
      },
    );
  }
};

/** A decoded cursor as the group it names; a 400 naming `cursor` when it names none. */
function positionOf(position: { value: string | number | null; id: string }): GroupPosition {
  const colon = position.id.indexOf(':');
  const kind = position.id.slice(0, colon) as MatchKind;
  if (typeof position.value !== 'number' || !KINDS.includes(kind)) {
    throw validationFailed([{ field: 'cursor', message: fieldMessage('cursor', fieldMessages.invalid()) }]);
  }
  return { count: position.value, kind, value: position.id.slice(colon + 1) };
}
