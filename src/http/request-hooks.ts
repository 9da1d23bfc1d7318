import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { validationFailed } from '../shared/errors.js';
import { hasLoneSurrogate, MAX_JSON_DEPTH, nestedTooDeep } from '../shared/json-limits.js';
import { messages } from '../shared/messages.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant the request acts for, once authenticated; logged with the request. */
    tenantId?: string;
  }
}

/** Echoes the request id on every answer and writes one log line per request (SPEC §12). */
export function installRequestHooks(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // The line's fields are the code's own and hold no credential, so it skips the redaction, which
  // would inspect each of them for a nested `token` (the logger's `*.token` path): 8 µs a line,
  // a fifth of what writing it costs (W4's profile, bench/results/profile-notes.md).
  const lines = app.log.child({}, { redact: [] });
  app.addHook('onResponse', (request, reply, done) => {
    lines.info(
      {
        requestId: request.id,
        tenant: request.tenantId,
        method: request.method,
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
        mcp: request.mcp,
      },
      'request',
    );
    done();
  });
}

/**
 * JSON bodies through secure-json-parse (Fastify's own parser), refusing `__proto__` and
 * `constructor.prototype` keys; an empty body is "no body", not an error.
 */
export function installJsonParser(app: FastifyInstance): void {
  // Only JSON is accepted (SPEC §1.2); any other media type, text/plain included, is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    try {
      const value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
      if (nestedTooDeep(text)) return done(validationFailed([], messages.nestedTooDeep(MAX_JSON_DEPTH)), undefined);
      if (hasLoneSurrogate(text, value)) {
        return done(validationFailed([], messages.invalidUnicode), undefined);
      }
      return done(null, value);
    } catch (error) {
      const poisoned = !(error instanceof SyntaxError) || /prototype/.test(error.message);
      return done(validationFailed([], poisoned ? messages.forbiddenJsonKey : messages.malformedJson), undefined);
    }
  });
}
