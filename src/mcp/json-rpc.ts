import type { FastifyReply } from 'fastify';

/**
 * SPEC §19: the protocol versions Funil speaks, newest first. `initialize` offers the newest 2025 one
 * to a client asking for another; 2026-07-28 is offered by `server/discover`.
 */
export const PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28', '2025-11-25', '2025-06-18'];

/** JSON-RPC 2.0's error codes (the SDK's `ErrorCode`), here so that refusing a message needs no SDK. */
const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;

export type JsonRpcId = string | number | null;

/** A JSON-RPC answer Funil makes itself, where the SDK would answer wrongly or not at all. */
export interface OwnAnswer {
  readonly status: number;
  readonly body: { jsonrpc: '2.0'; id: JsonRpcId } & (
    | { result: object }
    | { error: { code: number; message: string } }
  );
}

/** A `tools/call` whose arguments the SDK would refuse with an internal error (-32603): the tool's to refuse. */
export interface StrayArguments {
  readonly id: JsonRpcId;
  readonly name: string;
  readonly arguments: unknown;
}

export function methodOf(message: unknown): string | undefined {
  const method = isPlainObject(message) ? message.method : undefined;
  return typeof method === 'string' ? method.slice(0, 100) : undefined;
}

/**
 * What is refused before the SDK sees it: a batch (gone since MCP 2025-06-18; refusing it also keeps
 * "each JSON-RPC request counts" for the rate limit), a protocol version Funil does not speak, a
 * `tools/call` without a tool name (the SDK's own check would make that an internal error).
 * `arguments: null` is taken for no arguments, and other arguments that are not an object are
 * returned for the toolbox to refuse as the tool's validation failure (SPEC §19).
 */
export function preflight(
  message: unknown,
  version: string | string[] | undefined,
): OwnAnswer | StrayArguments | undefined {
  if (Array.isArray(message)) {
    return failure(400, null, INVALID_REQUEST, 'Invalid Request: one JSON-RPC message per request (no batches).');
  }
  if (typeof version === 'string' && !PROTOCOL_VERSIONS.includes(version)) {
    const supported = PROTOCOL_VERSIONS.join(', ');
    return failure(400, null, -32000, `Bad Request: unsupported protocol version ${version} (supported: ${supported})`);
  }
  if (!isPlainObject(message) || message.method !== 'tools/call' || !('id' in message)) return undefined;
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  const params = message.params;
  if (!isPlainObject(params) || typeof params.name !== 'string') {
    return failure(200, id, INVALID_PARAMS, 'Invalid params: tools/call needs `name`, a string.');
  }
  if (params.arguments === null) delete params.arguments;
  if (params.arguments === undefined || isPlainObject(params.arguments)) return undefined;
  return { id, name: params.name, arguments: params.arguments };
}

/**
 * A 2025-era `tools/call` the SDK would take as it stands and hand to the toolbox unchanged: the
 * headers its transport asks for (an Accept of JSON and event streams, a JSON body), a JSON-RPC
 * request with an integer or string id, and params of a tool name and object arguments only (a
 * `_meta`, asking for progress or naming a task, is the SDK's to read). Answered without the SDK's
 * server and transport, which cost more than the tool itself (`npm run bench`: W8 ÷ W2 from 0.34×
 * to 0.72×, W9 ÷ W1 from 0.57× to 0.80×); anything else goes through the SDK.
 */
export function plainToolCall(
  message: unknown,
  headers: { accept?: string | undefined; 'content-type'?: string | undefined },
): StrayArguments | undefined {
  const { accept, 'content-type': type } = headers;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!type?.toLowerCase().startsWith('application/json')) return undefined;
  if (!isPlainObject(message) || message.jsonrpc !== '2.0' || message.method !== 'tools/call') return undefined;
  if (!Object.keys(message).every((key) => MESSAGE_KEYS.has(key))) return undefined;
  const { id, params } = message;
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return undefined;
  if (!isPlainObject(params) || typeof params.name !== 'string') return undefined;
  if (!Object.keys(params).every((key) => PARAMS_KEYS.has(key))) return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  return { id: id as JsonRpcId, name: params.name, arguments: params.arguments };
}

const MESSAGE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS = new Set(['name', 'arguments']);

export function failure(status: number, id: JsonRpcId, code: number, message: string): OwnAnswer {
  return { status, body: { jsonrpc: '2.0', id, error: { code, message } } };
}

export function sendOwn(reply: FastifyReply, { status, body }: OwnAnswer) {
  return reply.code(status).type('application/json; charset=utf-8').send(answerJson(body));
}

/** The JSON text of values `jsonOf` serialized, while they live: a tool result's structuredContent. */
const serialized = new WeakMap<object, string>();

/**
 * `JSON.stringify(value)`, remembered for as long as `value` lives: a tool result carries its
 * structuredContent twice, as itself and as the text of its content, and an answer Funil sends
 * itself then writes the text it has instead of serializing the object again (a 100-lead search's
 * page is 25 KB). The value must not change after.
 */
export function jsonOf(value: object): string {
  const json = JSON.stringify(value);
  serialized.set(value, json);
  return json;
}

/** An answer's JSON text; a result's structuredContent already serialized by jsonOf is written as it was. */
function answerJson(body: OwnAnswer['body']): string {
  const structured = 'result' in body ? (body.result as { structuredContent?: unknown }).structuredContent : undefined;
  const json = typeof structured === 'object' && structured !== null ? serialized.get(structured) : undefined;
  if (json === undefined || !('result' in body)) return JSON.stringify(body);
  const { structuredContent: _, ...rest } = body.result as Record<string, unknown>;
  const others = JSON.stringify(rest);
  const result =
    others === '{}' ? `{"structuredContent":${json}}` : `${others.slice(0, -1)},"structuredContent":${json}}`;
  return `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":${result}}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
