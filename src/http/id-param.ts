import type { FastifyInstance } from 'fastify';
import { notFound } from '../shared/errors.js';
import { isUuid } from '../shared/ids.js';
import { messages, type Text } from '../shared/messages.js';
import { appendRouteHook } from './route-hooks.js';

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
  app.addHook('onRoute', (route) => {
    if (!route.url.includes(':id')) return;
    const text = (route.config as { notFoundText?: Text } | undefined)?.notFoundText ?? messages.routeNotFound;
    appendRouteHook(route, 'onRequest', async (request) => {
      const params = request.params as Record<string, unknown>;
      if (!isUuid(params.id)) throw notFound(text);
    });
  });
}
