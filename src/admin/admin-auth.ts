import type { FastifyInstance } from 'fastify';
import { bearerOf, secretsEqual } from '../auth/token-secret.js';
import { forbidden } from '../http/errors.js';
import { messages } from '../http/messages.js';
import { appendRouteHook } from '../http/route-hooks.js';

/** SPEC §9: the admin API answers only to FUNIL_ADMIN_TOKEN, and to nothing when it is unset. */
export function requireAdminToken(app: FastifyInstance, adminToken: string | undefined): void {
  app.addHook('onRoute', (route) => {
    appendRouteHook(route, 'onRequest', async (request) => {
      if (adminToken === undefined) throw forbidden(messages.adminDisabled);
      const presented = bearerOf(request.headers.authorization);
      if (presented === undefined) throw forbidden(messages.tokenMissing);
      if (!secretsEqual(presented, adminToken)) throw forbidden(messages.adminTokenInvalid);
    });
  });
}
