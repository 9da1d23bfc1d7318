import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { TokenAuthenticator } from '../auth/token-authenticator.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import { errorResponses, IdParams, SuccessBody } from '../http/schemas.js';
import { notFound, validationFailed } from '../shared/errors.js';
import { fieldMessage } from '../shared/messages.js';
import { pauseSubscriptionsOf } from '../webhooks/subscription-owner.js';
import { WebhookRepository } from '../webhooks/webhook.repository.js';
import { toCreatedToken, toTenant, toTokenSummary } from './admin.mapper.js';
import { adminMessages } from './admin.messages.js';
import { CreatedToken, CreateTenant, CreateToken, Tenant, TokenSummary, UpdateTenant } from './admin.schemas.js';
import { issueToken } from './issue-token.js';
import { TenantRepository } from './tenant.repository.js';
import { TokenRepository } from './token.repository.js';

interface AdminRoutesOptions {
  authenticator: TokenAuthenticator;
}

export const adminRoutes: FastifyPluginAsync<AdminRoutesOptions> = async (fastify, { authenticator }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // On the request's handle, within its budget for waiting on connections (http/database-wait.ts).
  const tenants = (request: { db: Db }) => new TenantRepository(request.db);
  const tokens = (request: { db: Db }) => new TokenRepository(request.db);
  const tenantNotFound = { notFoundText: adminMessages.tenantNotFound };

  app.post(
    '/tenants',
    {
      schema: {
        operationId: 'createTenant',
        tags: ['tenants'],
        body: CreateTenant,
        response: { 201: Tenant, ...errorResponses(400, 403) },
      },
    },
    async (request, reply) => reply.code(201).send(toTenant(await tenants(request).create(request.body.name))),
  );

  app.get(
    '/tenants',
    {
      schema: {
        operationId: 'listTenants',
        tags: ['tenants'],
        response: { 200: Type.Array(Tenant), ...errorResponses(403) },
      },
    },
    async (request) => (await tenants(request).list()).map(toTenant),
  );

  app.put(
    '/tenants/:id',
    {
      schema: {
        operationId: 'updateTenant',
        tags: ['tenants'],
        params: IdParams,
        body: UpdateTenant,
        response: { 200: Tenant, ...errorResponses(400, 403, 404) },
      },
      config: tenantNotFound,
    },
    async (request) => {
      const row = await tenants(request).update(request.params.id, request.body);
      if (!row) throw notFound(adminMessages.tenantNotFound);
      // Deactivation and reactivation take effect at once on this instance.
      authenticator.invalidate();
      return toTenant(row);
    },
  );

  app.post(
    '/tenants/:id/tokens',
    {
      schema: {
        operationId: 'createToken',
        tags: ['tokens'],
        params: IdParams,
        body: CreateToken,
        response: { 201: CreatedToken, ...errorResponses(400, 403, 404) },
      },
      config: tenantNotFound,
    },
    async (request, reply) => {
      const { name, scopes, expiresAt } = request.body;
      const expiry = expiresAt ? new Date(expiresAt) : null;
      if (expiry && expiry.getTime() <= Date.now()) {
        throw validationFailed([
          {
            field: 'expiresAt',
            message: fieldMessage('expiresAt', { pt: 'deve estar no futuro', en: 'must be in the future' }),
          },
        ]);
      }
      if (!(await tenants(request).find(request.params.id))) throw notFound(adminMessages.tenantNotFound);
      const issued = await issueToken(tokens(request), {
        tenantId: request.params.id,
        name,
        scopes,
        expiresAt: expiry,
      });
      return reply.code(201).send(toCreatedToken(issued));
    },
  );

  app.get(
    '/tenants/:id/tokens',
    {
      schema: {
        operationId: 'listTokens',
        tags: ['tokens'],
        params: IdParams,
        response: { 200: Type.Array(TokenSummary), ...errorResponses(403, 404) },
      },
      config: tenantNotFound,
    },
    async (request) => {
      if (!(await tenants(request).find(request.params.id))) throw notFound(adminMessages.tenantNotFound);
      return (await tokens(request).listForTenant(request.params.id)).map(toTokenSummary);
    },
  );

  app.delete(
    '/tokens/:id',
    {
      schema: {
        operationId: 'revokeToken',
        tags: ['tokens'],
        params: IdParams,
        response: { 200: SuccessBody, ...errorResponses(403, 404) },
      },
      config: { notFoundText: adminMessages.tokenNotFound },
    },
    async (request) => {
      await inTransaction(request.db, async (trx) => {
        if (!(await new TokenRepository(trx).revoke(request.params.id))) throw notFound(adminMessages.tokenNotFound);
        // What it subscribed to pauses now, not at its next event (SPEC §15).
        await pauseSubscriptionsOf(trx, new WebhookRepository(), request.params.id);
      });
      authenticator.invalidate();
      return { success: true as const };
    },
  );
};
