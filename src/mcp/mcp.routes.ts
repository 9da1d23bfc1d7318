import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ANY_TOKEN } from '../auth/scopes.js';
import type { CursorCodec } from '../http/cursor.js';
import { sendApiError } from '../http/error-handler.js';
import type { Services } from '../services.js';
import { customerTools } from './customer-tools.js';
import { answerOf, failure, methodOf, preflight, sendOwn } from './json-rpc.js';
import { leadTools } from './lead-tools.js';
import { instructionsFor, mcpServerFor } from './mcp-server.js';
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
    request.mcp = { method: methodOf(message) };
    const checked = preflight(message, request.headers['mcp-protocol-version']);
    if (checked && 'status' in checked) return sendOwn(reply, checked);
    let response: Response | undefined;
    if (checked) {
      const answer = await answerOf(checked.id, toolbox.call(request, checked.name, checked.arguments));
      if (!request.mcpFailure) return sendOwn(reply, answer);
    } else {
      const server = mcpServerFor(request, toolbox, instructions);
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
      await server.connect(transport);
      // Not closed after: with JSON answers it holds no stream, timer or pending request once it has
      // answered, and close() would only build an error (with its stack) for the requests it no longer has.
      response = await transport.handleRequest(webRequestOf(request), { parsedBody: message });
    }
    // The deadline answered meanwhile (FUNIL_REQUEST_TIMEOUT_MS): its 503 stands.
    if (reply.sent) return reply;
    if (request.mcpFailure) return sendApiError(request.mcpFailure, request, reply);
    if (!response) throw new Error('an MCP request got no answer');
    reply.code(response.status);
    const type = response.headers.get('content-type');
    if (type) reply.type(type);
    // The bytes as the transport encoded them: decoding them to a string only to encode it again cost
    // a tenth of a 100-lead search's CPU (npm run bench, W8).
    const body = Buffer.from(await response.arrayBuffer());
    return reply.send(body.length === 0 ? undefined : body);
  });

  // No stream to open and no session to end (stateless, JSON answers): the method is not allowed.
  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    schema: { hide: true },
    config,
    handler: async (_request, reply) =>
      sendOwn(
        reply.header('allow', 'POST'),
        failure(405, null, -32000, 'Method not allowed: this server answers POST only.'),
      ),
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
