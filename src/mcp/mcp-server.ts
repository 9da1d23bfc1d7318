import { type Implementation, Server, type ServerCapabilities } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../http/authenticate.js';
import { PACKAGE_VERSION } from '../shared/version.js';
import { PROTOCOL_VERSIONS } from './json-rpc.js';
import { quoted } from './mcp-tool.js';
import type { McpToolbox } from './mcp-toolbox.js';

const SERVER_INFO: Implementation = { name: 'funil', title: 'Funil', version: PACKAGE_VERSION };
const CAPABILITIES: ServerCapabilities = { tools: { listChanged: false } };
/**
 * What a Server checks elicitation answers with (Funil elicits nothing). Left to each Server, it is
 * a new Ajv per request: a third of an MCP request's CPU, measured under \`npm run bench\`'s W9.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** What the server tells a model about itself when a client connects. */
export function instructionsFor(leadStatuses: readonly string[]): string {
  return [
    "Funil keeps one account's sales leads and its customer register.",
    `Leads move through the pipeline stages ${quoted(leadStatuses, ' → ')}; a won lead becomes a customer with convert_lead.`,
    'Records are named by their `_id` (a UUID): find it with search_leads or search_customers.',
    'Reading or changing one record returns its `etag`; pass it back as `etag` to change the record only if nobody changed it since.',
    'Pass `idempotencyKey` (e.g. a fresh UUID) to a write you may retry: a retry with the same key and arguments changes nothing twice.',
    'A failure is a result with isError: its `code` says what went wrong (validation_failed, not_found, conflict, precondition_failed, forbidden) and `details` names the arguments to correct.',
  ].join('\n');
}

/**
 * The SDK's low-level `Server` for one HTTP request: stateless, so each request gets its own
 * (the SDK's advice: one server per request, so that JSON-RPC ids of concurrent clients never meet).
 * The low-level server, not `McpServer`: Funil's tools carry JSON Schemas made from TypeBox, and an
 * unknown tool must be a JSON-RPC error, where `McpServer` answers it with an `isError` result.
 * The SDK negotiates the version: `initialize` settles on one of the 2025 versions listed (the newest
 * when asked for another), `server/discover` offers 2026-07-28, whose requests each name theirs.
 */
export function mcpServerFor(request: FastifyRequest, toolbox: McpToolbox, instructions: string): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: CAPABILITIES,
    instructions,
    jsonSchemaValidator,
    supportedProtocolVersions: [...PROTOCOL_VERSIONS],
  });
  server.setRequestHandler('tools/list', () => ({ tools: toolbox.list(principalOf(request).scopes) }));
  server.setRequestHandler('tools/call', ({ params }) => toolbox.call(request, params.name, params.arguments));
  return server;
}
