import {
  classifyInboundRequest,
  createMcpHandler,
  ProtocolError,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../http/authenticate.js';
import { sendApiError } from '../http/error-handler.js';
import type { TenantPipelines } from '../pipelines/tenant-pipelines.js';
import type { CursorCodec } from '../records/cursor.js';
import { customerTools } from './customer-tools.js';
import { duplicateTools } from './duplicate-tools.js';
import { failure, type JsonRpcId, type OwnAnswer, plainToolCall, type StrayArguments, sendOwn } from './json-rpc.js';
import { leadTools } from './lead-tools.js';
import { describes, mcpServerFor } from './mcp-server.js';
import type { McpServices } from './mcp-services.js';
import { McpToolbox } from './mcp-toolbox.js';
import { pipelineTools } from './pipeline-tools.js';

/** The request headers the SDK's transports read (2026-07-28 adds the last two); no other reaches them. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name'] as const;

/** Answers one MCP message that passed `preflight`: `stray` when its tool's arguments are not an object. */
export type McpEndpoint = (
  request: FastifyRequest,
  reply: FastifyReply,
  stray: StrayArguments | undefined,
) => Promise<FastifyReply>;

/**
 * Everything of `POST /mcp` that needs the MCP SDK: the tools, and the SDK's server and transport.
 * `mcp.routes.ts` loads this module on the first MCP request, so a server that is never asked
 * over MCP does not carry the SDK (about 10 MB of a process's memory).
 */
export function mcpEndpoint(services: McpServices, cursors: CursorCodec): McpEndpoint {
  const toolbox = new McpToolbox(
    [
      ...leadTools(services, cursors),
      ...duplicateTools(services, cursors),
      ...pipelineTools(services),
      ...customerTools(services, cursors),
    ],
    services.idempotency,
  );
  // The caller's tenant's pipelines, for an answer that names its stages; a read of the database
  // only when the catalog's copy has expired, and before the SDK, so that a failure is REST's 503.
  const pipelinesFor = (request: FastifyRequest) =>
    describes(request.mcp?.method)
      ? services.pipelineCatalog.of(request.db, principalOf(request).tenantId)
      : Promise.resolve(undefined);

  // The web request the SDK is handed → the Fastify request it stands for, which the tools need, and its tenant's pipelines.
  const requests = new WeakMap<Request, { request: FastifyRequest; pipelines: TenantPipelines | undefined }>();
  // 2026-07-28 requests; the 2025 ones are served below, with JSON answers where this would stream.
  const modern = createMcpHandler(
    ({ requestInfo }) => {
      const served = requestInfo && requests.get(requestInfo);
      if (!served) throw new Error('an MCP request reached the SDK without its Fastify request');
      return mcpServerFor(served.request, toolbox, served.pipelines);
    },
    { legacy: 'reject' },
  );

  return async (request, reply, stray) => {
    let response: Response | undefined;
    const legacy = isLegacy(request);
    const call = stray ?? (legacy ? plainToolCall(request.body, request.headers) : undefined);
    if (call) {
      const answer = await answerOf(call.id, toolbox.call(request, call.name, call.arguments), legacy);
      if (!request.mcpFailure) return sendOwn(reply, answer);
    } else if (legacy) {
      const server = mcpServerFor(request, toolbox, await pipelinesFor(request));
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
      await server.connect(transport);
      // Not closed after: with JSON answers it holds no stream, timer or pending request once it has
      // answered, and close() would only build an error (with its stack) for the requests it no longer has.
      response = await transport.handleRequest(webRequestOf(request), { parsedBody: request.body });
    } else {
      const webRequest = webRequestOf(request);
      requests.set(webRequest, { request, pipelines: await pipelinesFor(request) });
      response = await modern.fetch(webRequest, { parsedBody: request.body });
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
  };
}

/** A tool's result (2026-07-28 results say they are complete), or the JSON-RPC error it threw (an unknown tool). */
function answerOf(id: JsonRpcId, outcome: Promise<object>, legacy: boolean): Promise<OwnAnswer> {
  return outcome.then(
    (result): OwnAnswer => ({
      status: 200,
      body: { jsonrpc: '2.0', id, result: legacy ? result : { ...result, resultType: 'complete' } },
    }),
    (error: unknown) => {
      if (error instanceof ProtocolError) return failure(200, id, error.code, error.message);
      throw error;
    },
  );
}

/**
 * Whether the SDK would serve the request as 2025-era traffic: isLegacyRequest's answer for a parsed
 * body (none is legacy; else the SDK's own classification of the body and headers), without the web
 * Request it takes, which a plain tools/call does not otherwise need.
 */
function isLegacy(request: FastifyRequest): boolean {
  const { body } = request;
  if (body === undefined) return true;
  const header = (name: (typeof TRANSPORT_HEADERS)[number]) => {
    const value = request.headers[name];
    return typeof value === 'string' ? { value } : undefined;
  };
  const [version, method, name] = [header('mcp-protocol-version'), header('mcp-method'), header('mcp-name')];
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    body,
    ...(version && { protocolVersionHeader: version.value }),
    ...(method && { mcpMethodHeader: method.value }),
    ...(name && { mcpNameHeader: name.value }),
  });
  return outcome.kind === 'legacy';
}

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
