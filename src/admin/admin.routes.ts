import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { TokenRepository } from '../auth/token.repository.js';
import type { TokenAuthenticator } from '../auth/token-authenticator.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import { answer, errorResponses, SuccessBody } from '../http/schemas.js';
import { notFound, validationFailed } from '../shared/errors.js';
import { isPhoneCountry } from '../shared/match-keys.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { pauseSubscriptionsOf } from '../webhooks/subscription-owner.js';
import { WebhookRepository } from '../webhooks/webhook.repository.js';
import { toCreatedToken, toTenant, toTokenSummary } from './admin.mapper.js';
import { adminMessages } from './admin.messages.js';
import {
  CreatedToken,
  CreateTenant,
  CreateToken,
  Tenant,
  TenantParams,
  TokenParams,
  TokenSummary,
  UpdateTenant,
} from './admin.schemas.js';
import { issueToken } from './issue-token.js';
import { TenantRepository } from './tenant.repository.js';

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
        summary: 'Create a tenant',
        description:
          'A new account, active, with no tokens yet: issue one with `POST /tenants/{id}/tokens`. Names need not be ' +
          'unique; the id is what names a tenant.',
        tags: ['tenants'],
        body: CreateTenant,
        response: { 201: answer(Tenant, 'The tenant created.'), ...errorResponses(400, 403) },
      },
    },
    async (request, reply) => {
      const { name, phoneCountry } = request.body;
      checkPhoneCountry(phoneCountry);
      return reply.code(201).send(toTenant(await tenants(request).create(name, phoneCountry)));
    },
  );

  app.get(
    '/tenants',
    {
      schema: {
        operationId: 'listTenants',
        summary: 'List tenants',
        description: 'Every tenant, active or not, oldest first.',
        tags: ['tenants'],
        response: { 200: answer(Type.Array(Tenant), 'The tenants.'), ...errorResponses(403) },
      },
    },
    async (request) => (await tenants(request).list()).map(toTenant),
  );

  app.put(
    '/tenants/:id',
    {
      schema: {
        operationId: 'updateTenant',
        summary: 'Rename, deactivate or reactivate a tenant',
        description:
          "An inactive tenant's tokens are refused (403), at once on this instance and within seconds on the others, " +
          'and its webhook deliveries and imports wait, on every instance; reactivated, it is served again and they ' +
          'resume within seconds.',
        tags: ['tenants'],
        params: TenantParams,
        body: UpdateTenant,
        response: { 200: answer(Tenant, 'The tenant as it is now.'), ...errorResponses(400, 403, 404) },
      },
      config: tenantNotFound,
    },
    async (request) => {
      checkPhoneCountry(request.body.phoneCountry);
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
        summary: "Issue a token for a tenant's programs",
        description:
          'With the scopes it names and, if given, an expiry in the future. The token itself is in this answer only: ' +
          'Funil keeps its SHA-256 hash.',
        tags: ['tokens'],
        params: TenantParams,
        body: CreateToken,
        response: { 201: answer(CreatedToken, 'The token, shown this once.'), ...errorResponses(400, 403, 404) },
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
        summary: "List a tenant's tokens",
        description: 'Revoked and expired ones too, each with the first characters of its value, never the value.',
        tags: ['tokens'],
        params: TenantParams,
        response: { 200: answer(Type.Array(TokenSummary), "The tenant's tokens."), ...errorResponses(403, 404) },
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
        summary: 'Revoke a token',
        description:
          'It is refused from now on (at once on this instance, within seconds on the others), the webhook ' +
          'subscriptions it created pause until another token of the tenant takes them over, and the imports it ' +
          'uploaded that are still running stop after their current step, cancelled.',
        tags: ['tokens'],
        params: TokenParams,
        response: { 200: answer(SuccessBody, 'Revoked.'), ...errorResponses(403, 404) },
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

/** A country whose phones can be read, or a 400 naming `phoneCountry`. */
function checkPhoneCountry(country: string | undefined): void {
  if (country === undefined || isPhoneCountry(country)) return;
  throw validationFailed([{ field: 'phoneCountry', message: fieldMessage('phoneCountry', fieldMessages.invalid()) }]);
}
