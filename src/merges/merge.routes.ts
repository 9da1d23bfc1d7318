import type { FastifyPluginAsync } from 'fastify';
import type { TSchema } from 'typebox';
import type { Scope } from '../auth/scopes.js';
import type { EventFamily } from '../events/change-events.js';
import { actorOf, principalOf } from '../http/authenticate.js';
import { expectedVersions, IfMatchHeaders, setEtag } from '../http/etag.js';
import { answer, conflictResponse, errorResponses, IdParams } from '../http/schemas.js';
import type { Text } from '../shared/messages.js';
import { type MergeBody, MergeBody as MergeBodySchema, mergeAnswer, UndoAnswer, UndoQuery } from './merge.schemas.js';
import type { MergeService } from './merge.service.js';

/** A resource whose records merge: its path, its read and write scopes, its object schema. */
export interface MergeRoute {
  readonly family: EventFamily;
  readonly path: 'leads' | 'customers';
  readonly noun: string;
  readonly scopes: readonly [Scope, Scope];
  readonly object: TSchema;
  readonly notFoundText: Text;
}

interface MergeRoutesOptions {
  merges: MergeService;
  resources: readonly MergeRoute[];
}

/** SPEC §21: merging records, and undoing a merge. */
export const mergeRoutes: FastifyPluginAsync<MergeRoutesOptions> = async (app, { merges, resources }) => {
  for (const resource of resources) {
    app.post(
      `/${resource.path}/merge`,
      {
        schema: {
          operationId: `merge${resource.noun}s`,
          summary: `Merge ${resource.path} into one`,
          description:
            'In one transaction the target keeps, field by field (custom fields too), the value chosen in `fields`, ' +
            "else its own, else the most recently updated source's; the sources are deleted (a unique value they " +
            'held may go to the target). Events: `*.merged` on the target with `data.mergedIds`, a `*.deleted` per ' +
            'source with `reason: "merge"` and `mergedInto`. Undo with `POST /merges/{id}/undo` while events are ' +
            'kept. `dryRun` answers the record the merge would make and writes nothing.',
          tags: [resource.path],
          headers: IfMatchHeaders,
          body: MergeBodySchema,
          response: {
            200: answer(mergeAnswer(resource.object), 'The merge, and the record it made (or would make).'),
            ...errorResponses(400, 403, 404, 412, 413, 415),
          },
        },
        config: { scope: [...resource.scopes], notFoundText: resource.notFoundText },
      },
      async (request, reply) => {
        const { merge, record } = await merges.merge(
          resource.family,
          request.db,
          actorOf(request),
          request.body as MergeBody,
          expectedVersions(request),
        );
        setEtag(reply, record);
        return { merge, record: record.object };
      },
    );
  }

  app.post(
    '/merges/:id/undo',
    {
      schema: {
        operationId: 'undoMerge',
        summary: 'Undo a merge',
        description:
          'Puts every source back with its id, values, custom values, `externalId` and `createdAt`, and the ' +
          'target\'s fields the merge changed, each with its event (`reason: "unmerge"`). Needs the read and ' +
          "write scopes of the merge's resource. At most once; while the merge's events are kept (410 after).",
        tags: ['merges'],
        params: IdParams,
        querystring: UndoQuery,
        response: {
          200: answer(UndoAnswer, 'Undone.'),
          ...errorResponses(403, 404, 410),
          ...conflictResponse(
            'undone already; or later changes would be lost (`blockers` names each: a field of the target changed ' +
              'since, a unique value of a source, or one the target gave up, that another record holds now, the ' +
              "target deleted, a source's pipeline deleted or stage removed) — `?force=true` " +
              'keeps them',
          ),
        },
      },
      config: { scope: { anyOf: ['leads:write', 'customers:write'] } },
    },
    async (request) => {
      const { id } = request.params as IdParams;
      const { force } = request.query as UndoQuery;
      return merges.undo(request.db, { ...actorOf(request), scopes: principalOf(request).scopes }, id, force === true);
    },
  );
};
