import { type CallToolResult, ProtocolError, type Tool } from '@modelcontextprotocol/server';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FastifyRequest } from 'fastify';
import { type TObject, Type } from 'typebox';
import { authMessages } from '../auth/auth.messages.js';
import { lackingScopes } from '../auth/scopes.js';
import { actorOf, principalOf } from '../http/authenticate.js';
import { apiErrorOf, errorBody, logFailure, schemaError } from '../http/error-handler.js';
import { ErrorBody } from '../http/schemas.js';
import { IdempotencyKey } from '../idempotency/idempotency.plugin.js';
import type { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import type { TenantPipelines } from '../pipelines/tenant-pipelines.js';
import { type ApiError, forbidden, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { bodyValidator } from '../shared/validation.js';
import { INVALID_PARAMS, isPlainObject, jsonOf } from './json-rpc.js';
import type { McpTool, ToolCall } from './mcp-tool.js';
import { portableSchema } from './portable-schema.js';
import { ToolIdempotency, type ToolOutcome } from './tool-idempotency.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** What an MCP request did, for its log line: the JSON-RPC method, the tool, the error code. */
    mcp?: { method?: string; tool?: string; code?: string };
    /** A tool call's failure of the server itself (5xx), which the route answers as REST would. */
    mcpFailure?: ApiError;
  }
}

interface ListedTool {
  readonly tool: McpTool;
  readonly listing: Tool;
}

interface PreparedTool {
  readonly tool: McpTool;
  readonly validate: ValidateFunction;
  /** Its entry in `tools/list`, unless it is listed to each tenant in words of its own (`listedFor`). */
  readonly listing: Tool;
}

/** The `_meta` key of a result that repeats an earlier call's (the REST API's `Idempotent-Replayed: true`). */
const REPLAYED = 'funil/idempotentReplayed';

/**
 * The tools an MCP request may call, and how a call runs (SPEC §19): its arguments checked by the
 * Ajv and the phrases of REST bodies, its scope by the token's, its `idempotencyKey` by §7's rules;
 * any failure a REST route would answer with a §2 error is a result with `isError: true` and that
 * error as `structuredContent`.
 */
export class McpToolbox {
  readonly #tools = new Map<string, PreparedTool>();
  readonly #idempotency: ToolIdempotency;
  /**
   * Each tenant's listing, kept while the catalog keeps that tenant's pipelines (one object per
   * tenant and read, PipelineCatalog): a tenant's stages can only be listed to that tenant, and a
   * change of its pipelines is listed once the catalog reads them again.
   */
  readonly #listings = new WeakMap<TenantPipelines, readonly ListedTool[]>();

  constructor(tools: readonly McpTool[], idempotency: IdempotencyRepository) {
    const ajv = bodyValidator();
    for (const tool of tools) {
      const input = inputOf(tool, tool.input);
      this.#tools.set(tool.name, {
        tool,
        validate: ajv.compile(input),
        listing: listingOf(tool, tool.description, input),
      });
    }
    this.#idempotency = new ToolIdempotency(idempotency);
  }

  /** `tools/list`: the tools the token's scopes allow, in the words of the caller's tenant's `pipelines`. */
  list(scopes: ReadonlySet<string>, pipelines: TenantPipelines): Tool[] {
    let listings = this.#listings.get(pipelines);
    if (!listings) {
      listings = [...this.#tools.values()].map(({ tool, listing }): ListedTool => {
        if (!tool.listedFor) return { tool, listing };
        const { description, input } = tool.listedFor(pipelines);
        return { tool, listing: listingOf(tool, description, inputOf(tool, input)) };
      });
      this.#listings.set(pipelines, listings);
    }
    return listings.filter(({ tool }) => lackingScopes(tool.scope, scopes) === undefined).map(({ listing }) => listing);
  }

  /**
   * `tools/call`. An unknown tool is a JSON-RPC error (-32602), as SPEC §19 and MCP 2025-11-25 ask.
   * A failure of the server itself (5xx) is left in `request.mcpFailure`, for the route to answer
   * as REST would: a 503 with Retry-After tells a client more than a tool result can.
   */
  async call(request: FastifyRequest, name: string, args: unknown = {}): Promise<CallToolResult> {
    const prepared = this.#tools.get(name);
    if (!prepared) throw new ProtocolError(INVALID_PARAMS, `Unknown tool: ${name}`);
    const outcome = await this.#outcome(request, prepared, args);
    request.mcp = { ...request.mcp, tool: name };
    if (outcome.status >= 400) request.mcp.code = (outcome.body as { code?: string }).code;
    if (outcome.failed) request.mcpFailure = outcome.failed;
    return {
      content: [{ type: 'text', text: jsonOf(outcome.body) }],
      structuredContent: outcome.body as Record<string, unknown>,
      ...(outcome.status >= 400 && { isError: true }),
      ...(outcome.replayed && { _meta: { [REPLAYED]: true } }),
    };
  }

  async #outcome(request: FastifyRequest, { tool, validate }: PreparedTool, args: unknown) {
    const fail = (error: unknown): ToolOutcome => failure(request, error);
    try {
      const { tenantId, tokenId, scopes } = principalOf(request);
      const lacking = lackingScopes(tool.scope, scopes);
      if (lacking !== undefined) throw forbidden(authMessages.scopeLacking(lacking));
      if (!isPlainObject(args)) throw validationFailed([{ field: 'arguments', message: ARGUMENTS_OBJECT }]);
      if (!validate(args)) throw argumentsRefused(validate.errors ?? [], tool);
      const { idempotencyKey, ...toolArgs } = args as { idempotencyKey?: string };
      const call: ToolCall = { db: request.db, tenantId, scopes, actor: actorOf(request) };
      const attempt = () => tool.run(call, toolArgs).then((body): ToolOutcome => ({ status: 200, body }), fail);
      if (idempotencyKey === undefined) return await attempt();
      const owner = { tenantId, tokenId, key: idempotencyKey };
      return await this.#idempotency.run(request.db, owner, { tool: tool.name, args: toolArgs }, attempt, {
        fail,
        log: request.log,
      });
    } catch (error) {
      return fail(error);
    }
  }
}

/** An error as the REST API would answer it: its §2 body, in the caller's language; unexpected ones logged. */
function failure(request: FastifyRequest, error: unknown): ToolOutcome {
  const apiError = apiErrorOf(error);
  logFailure(request, error, apiError);
  const body = errorBody(apiError, request);
  return { status: apiError.statusCode, body, ...(apiError.statusCode >= 500 && { failed: apiError }) };
}

const OUTPUT = { input: false };
const ARGUMENTS_OBJECT = fieldMessage('arguments', fieldMessages.type('object'));

/**
 * The 400 of arguments the schema refused. A tool's `requiredFieldText` (the REST route's message
 * for a missing required field) speaks of the record, so it is not used when the fault is the key.
 */
function argumentsRefused(errors: readonly Partial<ErrorObject>[], tool: McpTool) {
  const aboutKey = errors[0]?.instancePath === '/idempotencyKey';
  return schemaError(errors, 'arguments', aboutKey ? undefined : tool.requiredFieldText);
}

/** A tool's arguments: a write's take an `idempotencyKey` too. */
function inputOf(tool: McpTool, input: TObject): TObject {
  if (tool.effect === 'read') return input;
  return Type.Object(
    { ...input.properties, idempotencyKey: Type.Optional(IdempotencyKey) },
    { additionalProperties: false },
  );
}

function listingOf(tool: McpTool, description: string, input: TObject): Tool {
  const read = tool.effect === 'read';
  const successes = 'anyOf' in tool.output ? tool.output.anyOf : [tool.output];
  return {
    name: tool.name,
    title: tool.title,
    description,
    inputSchema: portableSchema(input, { input: true }) as Tool['inputSchema'],
    // SDK clients check structuredContent against it even on an isError result, so it admits the §2 error too.
    outputSchema: { type: 'object', anyOf: [...successes, ErrorBody].map((schema) => portableSchema(schema, OUTPUT)) },
    annotations: {
      title: tool.title,
      readOnlyHint: read,
      ...(!read && { destructiveHint: tool.effect !== 'create', idempotentHint: tool.effect === 'change' }),
      openWorldHint: false,
    },
  };
}
