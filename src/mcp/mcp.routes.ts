import type { FastifyPluginAsync, onRequestAsyncHookHandler } from 'fastify';
import { ANY_TOKEN } from '../auth/scopes.js';
import type { CursorCodec } from '../records/cursor.js';
import { forbidden } from '../shared/errors.js';
import { failure, methodOf, preflight, sendOwn } from './json-rpc.js';
import type { McpEndpoint } from './mcp-endpoint.js';
import type { McpServices } from './mcp-services.js';

interface McpRoutesOptions {
  services: McpServices;
  cursors: CursorCodec;
  /** The browser origins allowed to call the API (FUNIL_CORS_ORIGINS); `*`: any. */
  origins: readonly string[];
}

const foreignOrigin = {
  pt: 'Origem não permitida: inclua-a em FUNIL_CORS_ORIGINS para chamar o MCP de um navegador.',
  en: 'Origin not allowed: list it in FUNIL_CORS_ORIGINS to call MCP from a browser.',
};

/**
 * MCP's transport asks servers to check `Origin` (a page could otherwise reach a server on the
 * user's machine by DNS rebinding): present and not listed, a 403 before anything else. Programs
 * send none. The request's own Host is no proof: under rebinding it names the attacker's host.
 */
function checkOrigin(origins: readonly string[]): onRequestAsyncHookHandler {
  const any = origins.includes('*');
  return async (request) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !any && !origins.includes(origin)) throw forbidden(foreignOrigin);
  };
}

/**
 * SPEC §19: `POST /mcp`, a Model Context Protocol server over Streamable HTTP, stateless and
 * answering JSON. Any token of the tenant may connect (its scopes decide which tools it sees), and
 * without a usable one the answer is a 401 that asks for a bearer token. The scope's rate limit,
 * body limit and fair share apply to it as to every route.
 */
export const mcpRoutes: FastifyPluginAsync<McpRoutesOptions> = async (app, { services, cursors, origins }) => {
  // Its calls carry their own `idempotencyKey`: the REST header is not read.
  const config = { scope: ANY_TOKEN, bearerChallenge: true, ownIdempotency: true };
  // The route's own hook runs before those the scope appends: before the rate limit and the token.
  const onRequest = checkOrigin(origins);
  // Loaded once, by the first request that gets past the preflight; a failed load is tried again.
  let loading: Promise<McpEndpoint> | undefined;
  const loadEndpoint = () => {
    loading ??= import('./mcp-endpoint.js').then(
      (module) => module.mcpEndpoint(services, cursors),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    );
    return loading;
  };

  app.post('/mcp', { schema: { hide: true }, config, onRequest }, async (request, reply) => {
    const message = request.body;
    request.mcp = { method: methodOf(message) };
    const checked = preflight(message, request.headers['mcp-protocol-version']);
    if (checked && 'status' in checked) return sendOwn(reply, checked);
    const endpoint = await loadEndpoint();
    return endpoint(request, reply, checked);
  });

  // No stream to open and no session to end (stateless, JSON answers): the method is not allowed.
  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    schema: { hide: true },
    config,
    onRequest,
    handler: async (_request, reply) =>
      sendOwn(
        reply.header('allow', 'POST'),
        failure(405, null, -32000, 'Method not allowed: this server answers POST only.'),
      ),
  });
};
