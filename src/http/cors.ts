import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** What a browser page may send: the API's own request headers. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'X-Request-Id',
  'Accept-Language',
  // MCP (SPEC §19): a client sends the protocol version it negotiated; on 2026-07-28, the method and name too.
  'Mcp-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
];

/** What a browser page may read besides the CORS-safelisted headers. */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Link',
  'X-Next-Cursor',
  'X-Request-Id',
  'Idempotent-Replayed',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  // MCP's 401 (SPEC §19) says how to authenticate.
  'WWW-Authenticate',
];

/** How long a browser may reuse a preflight answer; short, so a changed origin list takes effect soon. */
export const CORS_MAX_AGE_SECONDS = 600;

const SHARED: FastifyCorsOptions = {
  methods: ['GET', 'POST', 'PUT', 'DELETE'],
  allowedHeaders: CORS_ALLOWED_HEADERS,
  exposedHeaders: CORS_EXPOSED_HEADERS,
  maxAge: CORS_MAX_AGE_SECONDS,
  credentials: false,
};

/**
 * Lets the pages of `origins` (exact origins, or `*`) call the routes under `pathPrefix` from a
 * browser. With no origins nothing is installed: no CORS header, and OPTIONS stays a 404.
 *
 * Register it before the scopes it serves, at the root: its hook then runs ahead of their rate
 * limit and authentication (route hooks), and answers a preflight (OPTIONS + Origin +
 * Access-Control-Request-Method) with 204 before either is reached. The preflight route it adds,
 * `OPTIONS *`, lives at the root too, outside the authenticated scope, so it needs no token and
 * uses no one's rate budget. Bearer tokens, not cookies, carry the credentials, so
 * `Access-Control-Allow-Credentials` is never sent.
 */
export async function allowCrossOrigin(
  app: FastifyInstance,
  { origins, pathPrefix }: { origins: readonly string[]; pathPrefix: string },
): Promise<void> {
  if (origins.length === 0) return;
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);

  const allowedOrigin = (request: FastifyRequest): string | false => {
    const origin = request.headers.origin;
    if (origin === undefined || !(anyOrigin || allowed.has(origin))) return false;
    if (!request.url.startsWith(`${pathPrefix}/`)) return false;
    // An OPTIONS that is not a preflight is not CORS: it gets the same 404 as any unknown route.
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] === undefined) return false;
    return anyOrigin ? '*' : origin;
  };

  await app.register(cors, {
    delegator: (request, callback) => callback(null, { ...SHARED, origin: allowedOrigin(request) }),
  });
}
