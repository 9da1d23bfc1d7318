import { type Implementation, Server, type ServerCapabilities } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../http/authenticate.js';
import type { TenantPipelines } from '../pipelines/tenant-pipelines.js';
import { PACKAGE_VERSION } from '../shared/version.js';
import { PROTOCOL_VERSIONS } from './json-rpc.js';
import type { McpToolbox } from './mcp-toolbox.js';
import { stageWords } from './pipeline-words.js';

const SERVER_INFO: Implementation = { name: 'funil', title: 'Funil', version: PACKAGE_VERSION };
const CAPABILITIES: ServerCapabilities = { tools: { listChanged: false } };
/**
 * What a Server checks elicitation answers with (Funil elicits nothing). Left to each Server, it is
 * a new Ajv per request: a third of an MCP request's CPU, measured under \`npm run bench\`'s W9.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** The methods whose answers name the tenant's stages: the instructions (`initialize`, `server/discover`) and the tools. */
const DESCRIBING = new Set(['initialize', 'server/discover', 'tools/list']);

export function describes(method: string | undefined): boolean {
  return method !== undefined && DESCRIBING.has(method);
}

/** What the server tells a model about itself when a client connects: the caller's tenant's stages named. */
export function instructionsFor(pipelines: TenantPipelines): string {
  return [
    "Funil keeps one account's sales leads and its customer register.",
    `Leads move through the stages of a pipeline. ${stageWords(pipelines)} A won lead becomes a customer with convert_lead; list_pipelines reads the pipelines.`,
    'Records are named by their `_id` (a UUID): find it with search_leads or search_customers.',
    'One person entered as several leads: find_duplicates finds leads sharing an e-mail or a phone; merge_leads merges them, after a dryRun shown to the person.',
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
 * `pipelines`: the caller's tenant's, read for the methods whose answer names its stages (`describes`).
 */
export function mcpServerFor(
  request: FastifyRequest,
  toolbox: McpToolbox,
  pipelines: TenantPipelines | undefined,
): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: CAPABILITIES,
    ...(pipelines && { instructions: instructionsFor(pipelines) }),
    jsonSchemaValidator,
    supportedProtocolVersions: [...PROTOCOL_VERSIONS],
  });
  server.setRequestHandler('tools/list', () => {
    if (!pipelines) throw new Error("tools/list without the tenant's pipelines");
    return { tools: toolbox.list(principalOf(request).scopes, pipelines) };
  });
  server.setRequestHandler('tools/call', ({ params }) => toolbox.call(request, params.name, params.arguments));
  return server;
}
