import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../http/authenticate.js';
import { answer, errorResponses } from '../http/schemas.js';
import { ANY_TOKEN, SCOPES } from './scopes.js';

const TokenInfo = Type.Object(
  {
    tokenId: Type.String({ format: 'uuid' }),
    tenant: Type.String({ format: 'uuid', description: 'The tenant the token belongs to.' }),
    scopes: Type.Array(Type.String(), {
      description: "What the token may do, in the order of the README's list of scopes.",
    }),
  },
  { additionalProperties: false },
);

/** `GET /token`: what the caller's own token is, for a client that shows only what it may do (the console). */
export const tokenRoutes: FastifyPluginAsync = async (app) => {
  app.get(
    '/token',
    {
      schema: {
        operationId: 'getToken',
        summary: 'The calling token: its tenant and scopes',
        tags: ['token'],
        response: { 200: answer(TokenInfo, 'The calling token.'), ...errorResponses(403) },
      },
      config: { scope: ANY_TOKEN },
    },
    async (request) => {
      const { tokenId, tenantId, scopes } = principalOf(request);
      return { tokenId, tenant: tenantId, scopes: SCOPES.filter((scope) => scopes.has(scope)) };
    },
  );
};
