import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf, principalOf } from '../http/authenticate.js';
import { setNextPage } from '../http/next-page.js';
import { answer, conflictResponse, errorResponses, IdParams, SuccessBody } from '../http/schemas.js';
import type { AnswerKeeping } from '../idempotency/idempotency.plugin.js';
import type { SecretBox } from './secret-box.js';
import { webhookMessages } from './webhook.messages.js';
import {
  Delivery,
  DeliveryListQuery,
  DeliveryParams,
  Webhook,
  WebhookCreate,
  WebhookUpdate,
  WebhookWithSecret,
} from './webhook.schemas.js';
import { MAX_SUBSCRIPTIONS, readableFamilies, typesNamedIn, type WebhookService } from './webhook.service.js';

interface WebhookRoutesOptions {
  webhooks: WebhookService;
  /** What seals the secrets kept in answers for Idempotency-Key replays. */
  secrets: SecretBox;
}

const read = { scope: 'webhooks:read', notFoundText: webhookMessages.webhookNotFound } as const;
const write = { scope: 'webhooks:write', notFoundText: webhookMessages.webhookNotFound } as const;
const tags = ['webhooks'];

/**
 * An answer that shows a secret is kept for Idempotency-Key replays (SPEC §7) with the secret
 * sealed, as the subscription keeps it: the idempotency records hold no secret in the clear.
 */
function secretSealedAnswers(secrets: SecretBox): AnswerKeeping {
  const transform = (change: (secret: string) => Promise<string>) => async (body: string) => {
    const answer = JSON.parse(body) as { secret?: unknown };
    if (typeof answer.secret !== 'string') return body;
    return JSON.stringify({ ...answer, secret: await change(answer.secret) });
  };
  return { store: transform((secret) => secrets.seal(secret)), replay: transform((sealed) => secrets.unseal(sealed)) };
}

/**
 * SPEC §15: webhook subscriptions and their delivery log. Their delivery is a worker's
 * (workers.ts), on an instance that delivers (FUNIL_WEBHOOKS_DELIVER).
 */
export const webhookRoutes: FastifyPluginAsync<WebhookRoutesOptions> = async (app, { webhooks: service, secrets }) => {
  const showsSecret = { ...write, idempotentAnswer: secretSealedAnswers(secrets) };
  const tenantOf = (request: FastifyRequest) => principalOf(request).tenantId;

  app.get(
    '/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        summary: "List the tenant's webhook subscriptions",
        tags,
        response: { 200: answer(Type.Array(Webhook), "The tenant's subscriptions."), ...errorResponses(403) },
      },
      config: read,
    },
    (request) => service.list(request.db, tenantOf(request)),
  );

  app.post(
    '/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        summary: 'Subscribe a URL to events',
        description:
          'Every event of the listed types committed from now on (and passing its `filter`, if any) is POSTed to the ' +
          'URL, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The answer ' +
          'holds the signing `secret`, shown only here. The webhook receives only event families the creating token ' +
          'can read.',
        tags,
        body: WebhookCreate,
        response: {
          201: answer(WebhookWithSecret, 'The subscription, with its signing secret (shown this once).'),
          ...errorResponses(400, 403, 413, 415),
          ...conflictResponse(`the tenant has ${MAX_SUBSCRIPTIONS} subscriptions already, the most it may have`),
        },
      },
      config: showsSecret,
      // SPEC §2: a 403 for a family the token cannot read (in `events` or the filter's `types`) comes before the body's 400s.
      preValidation: async (request) => {
        readableFamilies(principalOf(request).scopes, typesNamedIn(request.body));
      },
    },
    async (request, reply) =>
      reply.code(201).send(await service.create(request.db, callerOf(request), request.body as WebhookCreate)),
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'getWebhook',
        summary: 'Get a webhook subscription',
        tags,
        params: IdParams,
        response: { 200: answer(Webhook, 'The subscription.'), ...errorResponses(403, 404) },
      },
      config: read,
    },
    (request) => service.get(request.db, tenantOf(request), (request.params as IdParams).id),
  );

  app.put(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'updateWebhook',
        summary: 'Change a webhook subscription (partial)',
        description:
          'Changing `url`, `events` or `filter`, or turning it on again (`active: true`, which makes the caller its ' +
          'owner), also needs the read scopes of the event families it receives (`leads:read`, `customers:read`): 403 ' +
          'without. `filter: null` removes the filter.',
        tags,
        params: IdParams,
        body: WebhookUpdate,
        response: { 200: answer(Webhook, 'The subscription, changed.'), ...errorResponses(400, 403, 404, 413, 415) },
      },
      config: write,
    },
    (request) =>
      service.update(request.db, callerOf(request), (request.params as IdParams).id, request.body as WebhookUpdate),
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook subscription and its delivery log',
        tags,
        params: IdParams,
        response: { 200: answer(SuccessBody, 'Deleted, with its delivery log.'), ...errorResponses(403, 404) },
      },
      config: write,
    },
    async (request) => {
      await service.delete(request.db, tenantOf(request), (request.params as IdParams).id);
      return { success: true as const };
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: "Replace a webhook's signing secret",
        description: 'The answer holds the new `secret`; for 24 h the former one signs too (two signatures).',
        tags,
        params: IdParams,
        response: {
          200: answer(WebhookWithSecret, 'The subscription, with its new signing secret (shown this once).'),
          ...errorResponses(400, 403, 404),
        },
      },
      config: showsSecret,
    },
    (request) => service.rotateSecret(request.db, tenantOf(request), (request.params as IdParams).id),
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "A webhook's delivery log, newest first",
        description:
          'Each delivery with its latest attempt. While more exist, `X-Next-Cursor` (and `Link`) give the `before` ' +
          'of the next page.',
        tags,
        params: IdParams,
        querystring: DeliveryListQuery,
        response: { 200: answer(Type.Array(Delivery), 'A page of deliveries.'), ...errorResponses(400, 403, 404) },
      },
      config: read,
    },
    async (request, reply) => {
      const query = request.query as DeliveryListQuery;
      const { deliveries, more } = await service.deliveries(
        request.db,
        tenantOf(request),
        (request.params as IdParams).id,
        {
          status: query.status,
          before: query.before,
          limit: query.limit ?? 50,
        },
      );
      const last = deliveries[deliveries.length - 1];
      if (more && last) setNextPage(request, reply, last.id, 'before');
      return deliveries;
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Attempt a delivery again now',
        description:
          'A failed delivery, or one waiting for its next automatic try (which this replaces), is attempted at once; ' +
          "an attempt under way at that moment is a 409. Also needs the read scope of the delivery's event family " +
          '(`leads:read`, `customers:read`).',
        tags,
        params: DeliveryParams,
        response: {
          202: answer(Delivery, 'The delivery, waiting for the attempt asked for, with the attempts made so far.'),
          ...errorResponses(400, 403, 404),
          ...conflictResponse('an attempt of this delivery is under way; ask again once it has ended'),
        },
      },
      config: write,
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params as { id: string; deliveryId: string };
      return reply.code(202).send(await service.retry(request.db, callerOf(request), id, deliveryId));
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      schema: {
        operationId: 'testWebhook',
        summary: 'Send a webhook.test event now',
        description: 'Also needs the read scopes of the event families it receives (`leads:read`, `customers:read`).',
        tags,
        params: IdParams,
        response: {
          202: answer(Delivery, 'The test delivery, waiting for its first attempt (see the delivery log).'),
          ...errorResponses(400, 403, 404),
        },
      },
      config: write,
    },
    async (request, reply) =>
      reply.code(202).send(await service.test(request.db, callerOf(request), (request.params as IdParams).id)),
  );
};
