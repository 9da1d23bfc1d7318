import { type TObject, type TSchema, Type } from 'typebox';
import type { Scope } from '../auth/scopes.js';
import { etagOf, versionsOfIfMatch } from '../http/etag.js';
import { IdParams } from '../http/schemas.js';
import type { CursorCodec } from '../records/cursor.js';
import { listRequestOf, type RecordLister, readPage } from '../records/list-page.js';
import type { RecordRouteService } from '../records/record.routes.js';
import type { Stored } from '../records/record.service.js';
import type { Text } from '../shared/messages.js';
import {
  defineTool,
  Etag,
  IfMatchArgument,
  ifMatchOf,
  type McpTool,
  NextCursor,
  reworded,
  writableBody,
} from './mcp-tool.js';

/** A search's page when the call names none: enough to answer, little enough for a model's context. */
export const SEARCH_PAGE = 20;
/** SPEC §19: a search reads 1–100 rows a call. */
const SEARCH_MAX = 100;

/** A resource (leads, customers) as its four common tools see it: the REST routes' service and schemas. */
export interface ToolRecords<Item extends { _id: string }> {
  /** `lead`: the key of the record in a tool's answer, and the tools' names (`get_lead`). */
  readonly noun: string;
  readonly scopes: { readonly read: Scope; readonly write: Scope };
  readonly lister: RecordLister<Item> & { readonly service: RecordRouteService<Item> };
  readonly cursors: CursorCodec;
  readonly schemas: { readonly object: TObject; readonly listItem: TObject; create: TObject; update: TObject };
  /** The REST list's query schema, and which of its filters a search offers, reworded for a model where given. */
  readonly search: {
    readonly query: TObject;
    readonly filters: readonly string[];
    readonly words: Record<string, string>;
    /** Filters whose argument takes more than the REST query parameter (a list beside a comma-separated string). */
    readonly arguments?: Record<string, TSchema>;
  };
  readonly requiredFieldText?: Text;
  /** What each tool is for, in words for a model. */
  readonly descriptions: { search: string; get: string; create: string; update: string };
}

/** A single record's answer: the record under its noun, and its ETag. */
export function recordAnswer(noun: string, object: TSchema): TObject {
  return Type.Object({ [noun]: object, etag: Etag }, { additionalProperties: false });
}

export function answerOf(noun: string, stored: Stored<unknown>): object {
  return { [noun]: stored.object, etag: etagOf(stored) };
}

/** `search_<plural>`, `get_<noun>`, `create_<noun>`, `update_<noun>`: the tools every resource has. */
export function recordTools<Item extends { _id: string }>(records: ToolRecords<Item>): McpTool[] {
  const { noun, scopes, lister, schemas, descriptions } = records;
  const { service } = lister;
  const single = recordAnswer(noun, schemas.object);
  const plural = `${noun}s`;

  const { query, filters, words } = records.search;
  const parameter = (name: string) => {
    const schema = records.search.arguments?.[name] ?? (query.properties[name] as TSchema);
    return words[name] === undefined ? schema : reworded(schema, words[name]);
  };
  const searchInput = Type.Object(
    {
      ...Object.fromEntries(filters.map((name) => [name, parameter(name)])),
      sort: parameter('sort'),
      limit: reworded(
        query.properties.limit as TSchema,
        `How many ${plural} to return, 1–${SEARCH_MAX} (default ${SEARCH_PAGE}).`,
        { maximum: SEARCH_MAX, default: SEARCH_PAGE },
      ),
      cursor: reworded(
        query.properties.cursor as TSchema,
        'The `nextCursor` of the previous result, to read the next page; send the same other arguments with it.',
      ),
    },
    { additionalProperties: false },
  );

  return [
    defineTool({
      name: `search_${plural}`,
      title: `Search ${plural}`,
      description: descriptions.search,
      scope: scopes.read,
      effect: 'read',
      input: searchInput,
      output: Type.Object(
        { items: Type.Array(schemas.listItem), nextCursor: NextCursor },
        { additionalProperties: false },
      ),
      async run(call, args) {
        const query = { ...args, limit: args.limit ?? SEARCH_PAGE } as Record<string, unknown> & { cursor?: string };
        const { items, next } = await readPage(records.cursors, listRequestOf(lister, call.db, call.tenantId, query));
        return { items, nextCursor: next ?? null };
      },
    }),
    defineTool({
      name: `get_${noun}`,
      title: `Get a ${noun}`,
      description: descriptions.get,
      scope: scopes.read,
      effect: 'read',
      input: IdParams,
      output: single,
      run: async (call, { id }) => answerOf(noun, await service.find(call.db, call.tenantId, id)),
    }),
    defineTool({
      name: `create_${noun}`,
      title: `Create a ${noun}`,
      description: descriptions.create,
      scope: scopes.write,
      effect: 'create',
      input: writableBody(schemas.create),
      output: single,
      requiredFieldText: records.requiredFieldText,
      run: async (call, args) => answerOf(noun, await service.create(call.db, call.actor, args as never)),
    }),
    defineTool({
      name: `update_${noun}`,
      title: `Update a ${noun}`,
      description: descriptions.update,
      scope: scopes.write,
      effect: 'change',
      input: Type.Object(
        { id: IdParams.properties.id, fields: writableBody(schemas.update), etag: IfMatchArgument },
        { additionalProperties: false },
      ),
      output: single,
      async run(call, { id, fields, etag }) {
        const expected = versionsOfIfMatch(ifMatchOf(etag));
        return answerOf(noun, await service.update(call.db, call.actor, id, fields as never, expected));
      },
    }),
  ];
}
