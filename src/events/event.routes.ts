import type { FastifyPluginAsync } from 'fastify';
import secureJson from 'secure-json-parse';
import { principalOf } from '../http/authenticate.js';
import { setNextPage } from '../http/next-page.js';
import { answer, errorResponses } from '../http/schemas.js';
import { commaList } from '../records/list-query.js';
import { EventListQuery, type EventSchemas } from './event.schemas.js';
import { ALL_EVENT_TYPES, type EventService } from './event.service.js';
import { checkFilterTypes, type EventFilters, typesReadableWith } from './event-filters.js';

interface EventRoutesOptions {
  events: EventService;
  schemas: EventSchemas;
  filters: EventFilters;
}

/** SPEC §14: `GET /events`, the change feed of the caller's tenant (its retention is a worker's: workers.ts). */
export const eventRoutes: FastifyPluginAsync<EventRoutesOptions> = async (
  app,
  { events: service, schemas, filters },
) => {
  const { EventList } = schemas;

  app.get(
    '/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: 'Follow the change feed',
        description:
          'Every change of a lead or customer, oldest first, in commit order: a reader that sends the id of the last ' +
          'event it read as `after` never misses an event and never sees one twice. While more events exist, the ' +
          'answer carries `Link: <next page URL>; rel="next"` and `X-Next-Cursor` (the `after` of the next page). ' +
          'Lead events need `leads:read`, customer events `customers:read`; `import.finished` and `export.finished` ' +
          '(an import or export that ended) are asked for with either, and shown for the resources the token reads. ' +
          'Events are kept ' +
          'FUNIL_EVENT_RETENTION_DAYS days; an `after` older than that is a 410 `cursor_expired`. With `filter`, only ' +
          'the events it lets through; pages may then be short, or empty, and `X-Next-Cursor` still pages on exactly.',
        tags: ['events'],
        querystring: EventListQuery,
        response: { 200: answer(EventList, 'A page of events, oldest first.'), ...errorResponses(400, 403, 410) },
      },
      config: { scope: { anyOf: ['leads:read', 'customers:read'] } },
      // SPEC §2's order: a type the token may not read is a 403 before any 400 of the query.
      preValidation: async (request) => {
        const { scopes } = principalOf(request);
        const { types, filter } = request.query as Record<string, unknown>;
        for (const list of [types].flat()) {
          if (typeof list === 'string')
            checkFilterTypes(
              scopes,
              list.split(',').map((type) => type.trim()),
            );
        }
        if (typeof filter === 'string') checkFilterTypes(scopes, typesNamedIn(filter));
      },
    },
    async (request, reply) => {
      const query = request.query as EventListQuery;
      const principal = principalOf(request);
      const types = commaList('types', query.types, ALL_EVENT_TYPES);
      let filter: ReturnType<EventFilters['compile']> | undefined;
      if (query.filter !== undefined) {
        checkFilterTypes(principal.scopes, types);
        const parsed = filters.parse(query.filter, principal.scopes);
        filters.check(parsed, types ?? typesReadableWith(principal.scopes));
        filter = filters.compile(parsed);
      }
      const { events, more, next } = await service.feed(request.db, {
        tenantId: principal.tenantId,
        scopes: principal.scopes,
        after: query.after,
        types,
        objectId: query.objectId,
        limit: query.limit ?? 100,
        filter,
        self: principal.tokenId,
      });
      const last = events[events.length - 1];
      const nextAfter = next ?? (more ? last?.id : undefined);
      if (nextAfter) setNextPage(request, reply, nextAfter, 'after');
      // The schema's serializer picks each object's branch of its union by validating it (date-time
      // formats and all): a fifth of a page's CPU. render() builds each event of the schema's fields only.
      return reply.type('application/json; charset=utf-8').serializer(JSON.stringify).send(events);
    },
  );
};

/** The `types` of a filter's JSON text, if it has them; anything unreadable is the query validation's 400. */
function typesNamedIn(filter: string): unknown {
  try {
    return (
      secureJson.parse(filter, undefined, { protoAction: 'remove', constructorAction: 'remove' }) as {
        types?: unknown;
      } | null
    )?.types;
  } catch {
    return undefined;
  }
}
