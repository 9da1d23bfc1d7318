import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant the request acts for, once authenticated; logged with the request. */
    tenantId?: string;
  }
}

/** Echoes the request id on every answer and writes one log line per request (SPEC §12). */
export function installRequestHooks(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        tenant: request.tenantId,
        method: request.method,
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });
}

/** JSON bodies through Fastify's own hardened parser; an empty body is "no body", not an error. */
export function installJsonParser(app: FastifyInstance): void {
  // Only JSON is accepted (SPEC §1.2); any other media type, text/plain included, is a 415.
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    return parseJson(request, text, done);
  });
}
