import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TSchema } from 'typebox';
import type { Actor } from '../auth/caller.js';
import type { Scope, ScopeRule } from '../auth/scopes.js';
import type { Db } from '../db/database.js';
import type { ExpectedVersions } from '../db/precondition.js';
import { actorOf, principalOf } from '../http/authenticate.js';
import { expectedVersions, IfMatchHeaders, setEtag } from '../http/etag.js';
import { setNextPage } from '../http/next-page.js';
import { answer, conflictResponse, errorResponses, IdParams, SuccessBody } from '../http/schemas.js';
import type { Text } from '../shared/messages.js';
import type { CursorCodec } from './cursor.js';
import { listRequestOf, type RecordLister, type RecordListService, readPage } from './list-page.js';
import type { Stored, Upserted, UpsertKey } from './record.service.js';
import { type BatchService, registerBatchRoute } from './record-batch.routes.js';
import { UpsertQuery } from './upsert-query.js';

/** What the routes of a resource call: its service (leads, customers). */
export interface RecordRouteService<Item extends { _id: string }> extends BatchService, RecordListService<Item> {
  find(handle: Db, tenantId: string, id: string): Promise<Stored<unknown>>;
  create(handle: Db, actor: Actor, input: never): Promise<Stored<unknown>>;
  upsert(handle: Db, actor: Actor, key: UpsertKey, input: never): Promise<Upserted<unknown>>;
  update(handle: Db, actor: Actor, id: string, input: never, expected?: ExpectedVersions): Promise<Stored<unknown>>;
  setStatus(
    handle: Db,
    actor: Actor,
    id: string,
    status: string,
    expected?: ExpectedVersions,
  ): Promise<Stored<unknown>>;
  delete(handle: Db, actor: Actor, id: string, expected?: ExpectedVersions): Promise<void>;
}

export interface RecordRoutes<Item extends { _id: string }> extends RecordLister<Item> {
  cursors: CursorCodec;
  service: RecordRouteService<Item>;
  /** `leads`: the path, the tag, and the plural in operation names. */
  path: string;
  /** `Lead`: the singular in operation names. */
  noun: string;
  /** `create`: a scope that allows a plain create and nothing else (SPEC §5.7: `leads:create`). */
  scopes: { read: Scope; write: Scope; create?: Scope };
  notFoundText: Text;
  schemas: { object: TSchema; list: TSchema; listQuery: TSchema; create: TSchema; update: TSchema; status: TSchema };
  statusSummary: string;
  /** What clashes when a create or update meets a field unique per tenant held by another record (its 409). */
  conflictText: string;
  /** The message of a create's 400 when a required field is missing. */
  requiredFieldText?: Text;
}

/**
 * The six routes of a resource (SPEC §3, §4, §6, §8): list, get, create, set status, update,
 * delete. Each handler is the principal and the parsed input → the service → the reply; every
 * rule is the service's. Registered in this order, which is the order of the OpenAPI document.
 */
export function registerRecordRoutes<Item extends { _id: string }>(
  app: FastifyInstance,
  resource: RecordRoutes<Item>,
): void {
  const { service, schemas, scopes, notFoundText } = resource;
  const tags = [resource.path];
  const plural = capitalised(resource.path);
  const noun = resource.noun.toLowerCase();
  const article = /^[aeiou]/i.test(noun) ? 'an' : 'a';
  const conflict = conflictResponse(resource.conflictText);
  const byId = '/:id';
  const createScope: ScopeRule = scopes.create ? { anyOf: [scopes.write, scopes.create] } : scopes.write;

  app.get(
    `/${resource.path}`,
    {
      schema: {
        operationId: `list${plural}`,
        summary: `List ${resource.path}`,
        description:
          `A page of ${resource.path}, newest first unless \`sort\` says otherwise. While more rows exist, the answer ` +
          'carries `Link: <next page URL>; rel="next"` and `X-Next-Cursor`. A filtered page reads a bounded number of ' +
          'rows (FUNIL_LIST_SCAN_ROWS): it may hold fewer items than `limit`, even none, and still carry the next ' +
          'cursor; follow it until the headers are absent. Your own fields filter too: `custom.<key>=value` ' +
          "(equality, the text read as the field's type; a multiselect: contains), several at once.",
        tags,
        querystring: schemas.listQuery,
        response: { 200: answer(schemas.list, `A page of ${resource.path}.`), ...errorResponses(400, 403) },
      },
      config: { scope: scopes.read },
    },
    async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      const list = listRequestOf(resource, request.db, principalOf(request).tenantId, query);
      const { items, next } = await readPage(resource.cursors, list);
      if (next) setNextPage(request, reply, next);
      return items;
    },
  );

  app.get(
    `/${resource.path}${byId}`,
    {
      schema: {
        operationId: `get${resource.noun}`,
        summary: `Get ${article} ${noun}`,
        tags,
        params: IdParams,
        response: {
          200: answer(schemas.object, `The ${noun}; its version is the ETag header.`),
          ...errorResponses(403, 404),
        },
      },
      config: { scope: scopes.read, notFoundText },
    },
    async (request, reply) => {
      const { id } = request.params as IdParams;
      return withEtag(reply, await service.find(request.db, principalOf(request).tenantId, id));
    },
  );

  app.post(
    `/${resource.path}`,
    {
      schema: {
        operationId: `create${resource.noun}`,
        summary: `Create ${article} ${noun}, or update the one with the same key (upsert)`,
        description:
          `Creates ${article} ${noun} (201). With \`upsert=email\` or \`upsert=externalId\`, the body must hold that ` +
          `field: when ${article} ${noun} with its value exists, it is updated with the fields the body holds (absent ` +
          'fields keep their values; `null` or `""` clear them) and the answer is 200; else it is created (201). Both ' +
          `answers carry \`Funil-Upsert: created|updated\`. Concurrent upserts of one new key create one ${noun}.` +
          (resource.path === 'leads' ? ' By e-mail, the most recently created lead with it is the one updated.' : ''),
        tags,
        querystring: UpsertQuery,
        body: schemas.create,
        response: {
          200: answer(schemas.object, `With \`upsert=\`: the ${noun} that held the key, updated.`),
          201: answer(schemas.object, `The ${noun} created.`),
          ...errorResponses(400, 403, 413, 415),
          ...conflict,
        },
      },
      config: {
        scope: createScope,
        upsertScopes: [scopes.write, scopes.read],
        requiredFieldText: resource.requiredFieldText,
      },
    },
    async (request, reply) => {
      const { upsert } = request.query as UpsertQuery;
      const actor = actorOf(request);
      // The status is set once the write is done: a deadline's 503 sent meanwhile must not be taken
      // for the outcome the idempotency plugin records.
      if (upsert === undefined) {
        const stored = await service.create(request.db, actor, request.body as never);
        return withEtag(reply.code(201), stored);
      }
      const { stored, created } = await service.upsert(request.db, actor, upsert, request.body as never);
      reply.header('funil-upsert', created ? 'created' : 'updated');
      return withEtag(reply.code(created ? 201 : 200), stored);
    },
  );

  registerBatchRoute(app, {
    service,
    path: resource.path,
    scopes,
    schemas,
    requiredFieldText: resource.requiredFieldText,
  });

  app.put(
    `/${resource.path}${byId}/status`,
    {
      schema: {
        operationId: `update${resource.noun}Status`,
        summary: resource.statusSummary,
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: schemas.status,
        response: {
          200: answer(schemas.object, `The ${noun}, updated.`),
          ...errorResponses(400, 403, 404, 412, 413, 415),
        },
      },
      config: { scope: scopes.write, notFoundText },
    },
    async (request, reply) => {
      const { id } = request.params as IdParams;
      const { status } = request.body as { status: string };
      return withEtag(
        reply,
        await service.setStatus(request.db, actorOf(request), id, status, expectedVersions(request)),
      );
    },
  );

  app.put(
    `/${resource.path}${byId}`,
    {
      schema: {
        operationId: `update${resource.noun}`,
        summary: `Update some fields of ${article} ${noun}`,
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: schemas.update,
        response: {
          200: answer(schemas.object, `The ${noun}, updated.`),
          ...errorResponses(400, 403, 404, 412, 413, 415),
          ...conflict,
        },
      },
      config: { scope: scopes.write, notFoundText },
    },
    async (request, reply) => {
      const { id } = request.params as IdParams;
      const stored = await service.update(
        request.db,
        actorOf(request),
        id,
        request.body as never,
        expectedVersions(request),
      );
      return withEtag(reply, stored);
    },
  );

  app.delete(
    `/${resource.path}${byId}`,
    {
      schema: {
        operationId: `delete${resource.noun}`,
        summary: `Delete ${article} ${noun}`,
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 200: answer(SuccessBody, 'Deleted.'), ...errorResponses(403, 404, 412) },
      },
      config: { scope: scopes.write, notFoundText },
    },
    async (request) => {
      const { id } = request.params as IdParams;
      await service.delete(request.db, actorOf(request), id, expectedVersions(request));
      return { success: true as const };
    },
  );
}

/**
 * A single record's answer: its ETag, and the object, returned for Fastify to send through the
 * route's response schema (returned, not sent: the idempotency plugin reads a late outcome so).
 */
function withEtag(reply: FastifyReply, stored: Stored<unknown>): unknown {
  setEtag(reply, stored);
  return stored.object;
}

function capitalised(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
