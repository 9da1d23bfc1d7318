import assert, { AssertionError } from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { API } from './test-app.js';

export interface ToolAnswer {
  result: CallToolResult;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  body: any;
  isError: boolean;
}

/** Which tools answered a success and which an error, across every McpTestClient of the run (the contract's coverage). */
export const toolCoverage = new Map<string, Set<'success' | 'error'>>();

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/**
 * `compile`, once per schema (by its JSON) for the process. Each client lists every tool, and
 * compiling their schemas afresh for each cost the six MCP test files ~6 s of CPU: both checks of
 * a result (ours, and the SDK client's own of structuredContent) go through this.
 */
function compiledOnce<V>(compile: (schema: object) => V): (schema: object) => V {
  const compiled = new Map<string, V>();
  return (schema) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) {
      validate = compile(schema);
      compiled.set(key, validate);
    }
    return validate;
  };
}

const outputValidator = compiledOnce((schema) => ajv.compile(schema));

/** The SDK's own validator (its Ajv, its options), remembering what it compiled. */
const sdkValidator: jsonSchemaValidator = (() => {
  const sdk = new AjvJsonSchemaValidator();
  const getValidator = compiledOnce((schema) => sdk.getValidator(schema as JsonSchemaType));
  return { getValidator: <T>(schema: JsonSchemaType) => getValidator(schema) as JsonSchemaValidator<T> };
})();

/** The URL of the MCP endpoint of an app listening on 127.0.0.1 (listens once, on a free port). */
export async function mcpUrl(app: FastifyInstance): Promise<URL> {
  const address = app.server.listening ? app.server.address() : null;
  const base =
    address && typeof address === 'object'
      ? `http://127.0.0.1:${address.port}`
      : await app.listen({ host: '127.0.0.1', port: 0 });
  return new URL(`${base}${API}/mcp`);
}

/** A JSON-RPC message POSTed as a client's HTTP stack sends it, for what the SDKs' clients will not send. */
export function postMcp(url: URL, token: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/**
 * The SDK's own client over its Streamable HTTP transport, as an assistant's host would run it,
 * and the MCP twin of the OpenAPI contract check: every result is checked against the outputSchema
 * its tool listed, success or error, and the text item must hold the same JSON.
 */
export class McpTestClient {
  readonly #outputs = new Map<string, ValidateFunction>();

  private constructor(
    readonly client: Client,
    readonly transport: StreamableHTTPClientTransport,
    readonly tools: Tool[],
  ) {
    for (const tool of tools) if (tool.outputSchema) this.#outputs.set(tool.name, outputValidator(tool.outputSchema));
  }

  static async connect(url: URL, token: string, headers: Record<string, string> = {}): Promise<McpTestClient> {
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
    });
    const client = new Client({ name: 'funil-test', version: '1.0.0' }, { jsonSchemaValidator: sdkValidator });
    await client.connect(transport);
    const { tools } = await client.listTools();
    return new McpTestClient(client, transport, tools);
  }

  toolNames(): string[] {
    return this.tools.map((tool) => tool.name).sort();
  }

  async call(name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
    const result = (await this.client.callTool({ name, arguments: args })) as CallToolResult;
    const body = result.structuredContent;
    const isError = result.isError === true;
    const where = `${name} → ${isError ? 'error' : 'success'}`;
    const text = result.content[0];
    if (
      result.content.length !== 1 ||
      text?.type !== 'text' ||
      JSON.stringify(JSON.parse(text.text)) !== JSON.stringify(body)
    ) {
      throw new AssertionError({ message: `${where}: the text item does not hold the structuredContent` });
    }
    const validate = this.#outputs.get(name);
    if (validate && !validate(body)) {
      throw new AssertionError({ message: `${where} breaks its outputSchema: ${ajv.errorsText(validate.errors)}` });
    }
    if (validate) {
      const outcomes = toolCoverage.get(name) ?? new Set();
      outcomes.add(isError ? 'error' : 'success');
      toolCoverage.set(name, outcomes);
    }
    if (isError && (body?.success !== false || typeof body.code !== 'string' || typeof body.error !== 'string')) {
      throw new AssertionError({ message: `${where}: not a SPEC §2 error body: ${JSON.stringify(body)}` });
    }
    return { result, body, isError };
  }

  /** A call that must succeed: its structuredContent. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  async succeeds(name: string, args: Record<string, unknown> = {}): Promise<any> {
    const answer = await this.call(name, args);
    assert.equal(answer.isError, false, `${name}: ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  /** A call that must fail with `code`: its SPEC §2 body. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  async fails(code: string, name: string, args: Record<string, unknown> = {}): Promise<any> {
    const answer = await this.call(name, args);
    assert.equal(answer.isError, true, `${name} should fail: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.body.code, code, JSON.stringify(answer.body));
    return answer.body;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
