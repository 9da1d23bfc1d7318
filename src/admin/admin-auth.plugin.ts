import type { FastifyInstance } from 'fastify';
import { authMessages } from '../auth/auth.messages.js';
import { bearerOf, secretsEqual } from '../auth/token-secret.js';
import { appendRouteHook } from '../http/route-hooks.js';
import { forbidden } from '../shared/errors.js';
import { adminMessages } from './admin.messages.js';

/** SPEC §9: the admin API answers only to FUNIL_ADMIN_TOKEN, and to nothing when it is unset. */
export function requireAdminToken(app: FastifyInstance, adminToken: string | undefined): void {
  app.addHook('onRoute', (route) => {
    appendRouteHook(route, 'onRequest', async (request) => {
      if (adminToken === undefined) throw forbidden(adminMessages.adminDisabled);
      const presented = bearerOf(request.headers.authorization);
      if (presented === undefined) throw forbidden(authMessages.tokenMissing);
      if (!secretsEqual(presented, adminToken)) throw forbidden(adminMessages.adminTokenInvalid);
    });
  });
}
