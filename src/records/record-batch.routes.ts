import type { FastifyInstance } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { Actor } from '../auth/caller.js';
import type { Scope } from '../auth/scopes.js';
import type { Db } from '../db/database.js';
import { actorOf } from '../http/authenticate.js';
import { errorBody, schemaError } from '../http/error-handler.js';
import { answer, ErrorBody, errorResponses } from '../http/schemas.js';
import { ApiError } from '../shared/errors.js';
import type { Text } from '../shared/messages.js';
import { buildValidatorCompiler } from '../shared/validation.js';
import type { Upserted, UpsertKey } from './record.service.js';
import { UpsertQuery } from './upsert-query.js';

/** SPEC §13: a batch holds 1 to 100 create bodies. */
export const MAX_BATCH_ITEMS = 100;

/** What a batch route calls: its resource's service. */
export interface BatchService {
  batch(
    handle: Db,
    actor: Actor,
    inputs: readonly unknown[],
    key?: UpsertKey,
  ): Promise<(Upserted<unknown> | ApiError)[]>;
}

export interface BatchRoute {
  service: BatchService;
  path: string;
  scopes: { read: Scope; write: Scope };
  schemas: { object: TSchema; create: TSchema };
  requiredFieldText?: Text | undefined;
}

/**
 * `POST /<resource>/batch` (SPEC §13): the envelope is the route's to check (a malformed one is a
 * single 400); each item is checked against the create schema on its own, so one bad item is that
 * item's 400 and the others go on. The service applies them in one transaction.
 */
export function registerBatchRoute(app: FastifyInstance, route: BatchRoute): void {
  const compile = buildValidatorCompiler();
  const validateItem = compile({ schema: route.schemas.create, method: 'POST', url: '', httpPart: 'body' });
  const envelope = Type.Object(
    { items: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH_ITEMS }) },
    { additionalProperties: false },
  );
  const validateEnvelope = compile({ schema: envelope, method: 'POST', url: '', httpPart: 'body' });
  const plural = route.path.charAt(0).toUpperCase() + route.path.slice(1);

  app.post(
    `/${route.path}/batch`,
    {
      schema: {
        operationId: `batch${plural}`,
        summary: `Create or upsert up to ${MAX_BATCH_ITEMS} ${route.path} in one request`,
        description:
          `Applies each item as \`POST /${route.path}\` would (with \`upsert=\`, as an upsert), in input order, in one ` +
          'transaction: an item that fails leaves no trace and the others go on. The answer is 200 with one result per ' +
          'item, in input order: `status` 201 or 200 with `data`, or the status of its error with the usual error `{success: false, error, code, details?}` as `error` ' +
          'body. A body that is not `{"items": [1–100 items]}` is one 400. `Idempotency-Key` covers the whole batch; ' +
          'it counts as one request for the rate limit.',
        tags: [route.path],
        querystring: UpsertQuery,
        body: Type.Object(
          { items: Type.Array(route.schemas.create, { minItems: 1, maxItems: MAX_BATCH_ITEMS }) },
          {
            additionalProperties: false,
            examples: [{ items: (route.schemas.create as { examples?: unknown[] }).examples ?? [] }],
          },
        ),
        response: {
          200: answer(batchResults(route.schemas.object), 'One result per item, in input order.'),
          ...errorResponses(400, 403, 413, 415),
        },
      },
      config: { scope: route.scopes.write, upsertScopes: [route.scopes.write, route.scopes.read] },
      // The route's schema documents the items; only the envelope is checked before the handler.
      validatorCompiler: (request) => (request.httpPart === 'body' ? validateEnvelope : compile(request)),
      // Before the Idempotency-Key is compared (a preHandler added after this one): each item as
      // its check leaves it (trimmed, e-mails lower-cased), so that a retried batch means what a
      // retried single POST means (SPEC §7). The handler checks them again, for their errors.
      preHandler: async (request) => {
        for (const item of (request.body as { items: unknown[] }).items) validateItem(item);
      },
    },
    async (request) => {
      const { upsert } = request.query as UpsertQuery;
      const { items } = request.body as { items: unknown[] };
      const inputs = items.map((item) =>
        validateItem(item) ? item : schemaError(validateItem.errors ?? [], 'body', route.requiredFieldText),
      );
      const outcomes = await route.service.batch(request.db, actorOf(request), inputs, upsert);
      return {
        results: outcomes.map((outcome, index) =>
          outcome instanceof ApiError
            ? { index, status: outcome.statusCode, error: errorBody(outcome, request) }
            : { index, status: outcome.created ? 201 : 200, data: outcome.stored.object },
        ),
      };
    },
  );
}

function batchResults(object: TSchema) {
  const index = Type.Integer({ minimum: 0, description: 'The position of the item in `items`.' });
  return Type.Object(
    {
      results: Type.Array(
        Type.Union([
          Type.Object(
            {
              index,
              status: Type.Integer({ enum: [200, 201], description: '201 created, 200 updated.' }),
              data: object,
            },
            { additionalProperties: false },
          ),
          Type.Object(
            { index, status: Type.Integer({ minimum: 400, maximum: 499 }), error: ErrorBody },
            { additionalProperties: false },
          ),
        ]),
      ),
    },
    { additionalProperties: false },
  );
}
