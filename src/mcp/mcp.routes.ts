import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ANY_TOKEN } from '../auth/scopes.js';
import type { CursorCodec } from '../http/cursor.js';
import type { Services } from '../services.js';
import { customerTools } from './customer-tools.js';
import { leadTools } from './lead-tools.js';
import { instructionsFor, mcpServerFor, PROTOCOL_VERSIONS } from './mcp-server.js';
import { McpToolbox } from './mcp-toolbox.js';

interface McpRoutesOptions {
  services: Services;
  cursors: CursorCodec;
}

/** The request headers the SDK's transport reads; no other reaches it. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

/**
 * SPEC §19: `POST /mcp`, a Model Context Protocol server over Streamable HTTP, stateless and
 * answering JSON. Any token of the tenant may connect (its scopes decide which tools it sees), and
 * without a usable one the answer is a 401 that asks for a bearer token. The scope's rate limit,
 * body limit and fair share apply to it as to every route.
 */
export const mcpRoutes: FastifyPluginAsync<McpRoutesOptions> = async (app, { services, cursors }) => {
  const toolbox = new McpToolbox([...leadTools(services, cursors), ...customerTools(services, cursors)], services.db);
  const instructions = instructionsFor(services.leadStatuses);
  // Its calls carry their own `idempotencyKey`: the REST header is not read.
  const config = { scope: ANY_TOKEN, bearerChallenge: true, ownIdempotency: true };

  app.post('/mcp', { schema: { hide: true }, config }, async (request, reply) => {
    const message = request.body;
    const method = (message as { method?: unknown } | undefined)?.method;
    request.mcp = { method: typeof method === 'string' ? method.slice(0, 100) : undefined };
    // Batches went with MCP 2025-06-18; refusing them also keeps "each JSON-RPC request counts" for the rate limit.
    if (Array.isArray(message)) {
      return jsonRpcError(reply, 400, -32600, 'Invalid Request: send one JSON-RPC message per request (no batches).');
    }
    const version = request.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !PROTOCOL_VERSIONS.includes(version)) {
      const supported = PROTOCOL_VERSIONS.join(', ');
      return jsonRpcError(
        reply,
        400,
        -32000,
        `Bad Request: unsupported protocol version ${version} (supported: ${supported})`,
      );
    }
    const server = mcpServerFor(request, toolbox, instructions);
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(webRequestOf(request), { parsedBody: message });
      reply.code(response.status);
      const type = response.headers.get('content-type');
      if (type) reply.type(type);
      const body = await response.text();
      return body === '' ? reply.send() : reply.serializer(String).send(body);
    } finally {
      await server.close();
    }
  });

  // No stream to open and no session to end (stateless, JSON answers): the method is not allowed.
  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    schema: { hide: true },
    config,
    handler: async (_request, reply) =>
      jsonRpcError(reply.header('allow', 'POST'), 405, -32000, 'Method not allowed: this server answers POST only.'),
  });
};

/** The request as the SDK's web-standard transport takes it; the parsed body is handed over beside it. */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  // The transport only reports the URL to handlers, which do not read it.
  return new Request('http://localhost/mcp', { method: 'POST', headers });
}

function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .serializer(JSON.stringify)
    .send({ jsonrpc: '2.0', id: null, error: { code, message } });
}
