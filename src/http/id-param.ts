import type { FastifyInstance } from 'fastify';
import { isUuid } from '../shared/ids.js';
import { notFound } from './errors.js';
import { messages, type Text } from './messages.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The 404 message of a route whose `:id` names no record. */
    notFoundText?: Text;
  }
}

/**
 * SPEC §2 order of checks: after authentication, an `:id` that is not a UUID is a 404
 * (it cannot name a record), before the body is validated.
 */
export function rejectMalformedIds(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const params = request.params as Record<string, unknown> | undefined;
    if (params && 'id' in params && !isUuid(params.id)) {
      throw notFound(request.routeOptions.config.notFoundText ?? messages.routeNotFound);
    }
  });
}
