import { type Static, type TObject, type TProperties, type TSchema, type TUnion, Type } from 'typebox';
import type { Actor } from '../auth/caller.js';
import type { ScopeRule } from '../auth/scopes.js';
import type { Db } from '../db/database.js';
import type { TenantPipelines } from '../pipelines/tenant-pipelines.js';
import type { Text } from '../shared/messages.js';
import { IgnoredOnWrite, Nullable } from '../shared/schemas.js';

/** Who calls a tool: the token's tenant and scopes, and the actor its writes' events name (SPEC §14). */
export interface ToolCall {
  /** The request's database handle (http/database-wait.ts). */
  readonly db: Db;
  readonly tenantId: string;
  readonly scopes: ReadonlySet<string>;
  readonly actor: Actor;
}

/**
 * What a tool does to the data, which its MCP annotations say: `read` changes nothing; `create`
 * only adds; `change` overwrites what is there, and repeating it changes nothing more; `delete`
 * removes records (a merge deletes its sources), and a repeat does not answer the same (it finds
 * them gone), so a client should not retry it on its own: `idempotencyKey` makes a retry safe.
 */
export type ToolEffect = 'read' | 'create' | 'change' | 'delete';

/**
 * One MCP tool (SPEC §19): a thin adapter over the service a REST route calls, its argument and
 * result schemas made from the route's own. A tool that is not `read` also takes `idempotencyKey`
 * (the toolbox adds it), and fails the way the route fails: by throwing the route's ApiError.
 */
export interface McpTool {
  readonly name: string;
  readonly title: string;
  /** For a model: what it does, when to use it, what it returns. */
  readonly description: string;
  readonly scope: ScopeRule;
  readonly effect: ToolEffect;
  readonly input: TObject;
  /** The `structuredContent` of a success: an object, or one of several (a tool whose arguments pick its answer). */
  readonly output: TObject | TUnion<TObject[]>;
  /** The message of a 400 whose first fault is a required argument missing (the route's `requiredFieldText`). */
  readonly requiredFieldText?: Text;
  /**
   * How the tool is listed to one tenant, where its words or its `input` name the tenant's own
   * stages (SPEC §19, §20). Only the listing: calls are checked against `input`, and the service
   * checks a status against the lead's own pipeline.
   */
  readonly listedFor?: (pipelines: TenantPipelines) => TenantListing;
  run(call: ToolCall, args: Record<string, unknown>): Promise<object>;
}

/** A tool's description and arguments as one tenant's `tools/list` shows them. */
export interface TenantListing {
  readonly description: string;
  readonly input: TObject;
}

/** A tool whose `run` sees its arguments typed by its input schema (they are validated before it runs). */
export function defineTool<I extends TObject>(
  tool: Omit<McpTool, 'input' | 'run'> & { input: I; run(call: ToolCall, args: Static<I>): Promise<object> },
): McpTool {
  return tool as unknown as McpTool;
}

/**
 * A REST body schema without the read-only fields it accepts and ignores (`_id`, `createdAt`…):
 * a client echoing an object back needs them, a model reading the schema is only misled by them.
 */
export function writableBody(body: TObject): TObject {
  const properties = Object.fromEntries(
    Object.entries(body.properties).filter(([, schema]) => schema !== IgnoredOnWrite),
  ) as TProperties;
  const { additionalProperties, minProperties, description } = body as TObject & {
    additionalProperties?: boolean;
    minProperties?: number;
    description?: string;
  };
  return Type.Object(properties, {
    additionalProperties,
    ...(minProperties !== undefined && { minProperties }),
    ...(description !== undefined && { description }),
  });
}

/** A parameter of a REST schema with words of its own for a model (and other bounds, when given). */
export function reworded<T extends TSchema>(schema: T, description: string, bounds: Record<string, unknown> = {}) {
  return Type.Optional(Type.Unsafe<Static<T>>({ ...schema, ...bounds, description }));
}

/** `object` with some of its properties' schemas replaced, each as required or optional as before. */
export function withProperties(object: TObject, properties: Record<string, TSchema>): TObject {
  const required = new Set<string>(object.required ?? []);
  const replaced = Object.entries(properties).map(([name, schema]) => [
    name,
    required.has(name) ? schema : Type.Optional(schema),
  ]);
  return { ...object, properties: { ...object.properties, ...Object.fromEntries(replaced) } };
}

/** Values as a description names them for a model: `"new", "contacted"`. */
export function quoted(values: readonly string[], separator = ', '): string {
  return values.map((value) => `"${value}"`).join(separator);
}

/** A record's version as its ETag (`"3"`), which a later change may name to apply only to that version. */
export const Etag = Type.String({
  description:
    'The version of the record as this answer saw it. Pass it as `etag` to a later change to apply that ' +
    'change only if nobody has changed the record since.',
  examples: ['"3"'],
});

/** The `etag` argument of a change: SPEC §8's If-Match. */
export const IfMatchArgument = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 200,
    description:
      'Optional: the `etag` of the record as you last read it. The change then applies only if the record is ' +
      'still in that version; otherwise nothing changes and the result is a `precondition_failed` error: read ' +
      'the record again, and decide again.',
  }),
);

/** The `etag` argument as an If-Match value: a model may well send the version without its quotes. */
export function ifMatchOf(etag: string | undefined): string | undefined {
  return etag !== undefined && /^\d{1,9}$/.test(etag) ? `"${etag}"` : etag;
}

/** The cursor a search or a history answers with: `null` on the last page. */
export const NextCursor = Nullable(
  Type.String({
    description: 'Pass it as `cursor`, with the same other arguments, to read the next page; null: this was the last.',
  }),
);
