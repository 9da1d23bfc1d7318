import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { validationFailed } from '../shared/errors.js';
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
      if (SURROGATE_ESCAPE.test(text) && hasLoneSurrogate(value)) {
        return done(validationFailed([], messages.invalidUnicode), undefined);
      }
      return done(null, value);
    } catch (error) {
      const poisoned = !(error instanceof SyntaxError) || /prototype/.test(error.message);
      return done(validationFailed([], poisoned ? messages.forbiddenJsonKey : messages.malformedJson), undefined);
    }
  });
}

/**
 * Far deeper than any body the API takes (an MCP tool call's: six levels), and far below what overflows the stack
 * of the JSON.stringify that hashes a body for its Idempotency-Key: JSON.parse takes 500,000 levels,
 * JSON.stringify does not.
 */
const MAX_JSON_DEPTH = 64;

/** `"`, `\\`, `[`, `]`, `{`, `}` */
const [QUOTE, BACKSLASH, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE] = [0x22, 0x5c, 0x5b, 0x5d, 0x7b, 0x7d];

/** Whether valid JSON text nests arrays and objects deeper than MAX_JSON_DEPTH. */
function nestedTooDeep(text: string): boolean {
  if (text.length <= 2 * MAX_JSON_DEPTH) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) depth--;
  }
  return false;
}

/** Only a `\uD800`–`\uDFFF` escape can put a lone surrogate in parsed JSON; raw bytes decode to U+FFFD. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /\p{Surrogate}/u;

/** PostgreSQL cannot store half a character, and would silently store U+FFFD instead. */
function hasLoneSurrogate(root: unknown): boolean {
  const stack = [root];
  while (stack.length) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return true;
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (LONE_SURROGATE.test(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}
