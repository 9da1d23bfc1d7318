import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpTestClient, mcpUrl } from '../helpers/mcp-client.js';
import { runInspector } from '../helpers/mcp-inspector.js';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';

type Schema = Record<string, unknown>;

/** Each schema node of `schema`, with its path (`properties.custom`), as `visit` sees it. */
function walk(schema: unknown, path: string, visit: (node: Schema, path: string) => void): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return;
  const node = schema as Schema;
  visit(node, path);
  for (const key of ['properties', 'patternProperties', '$defs']) {
    for (const [name, sub] of Object.entries((node[key] as Schema | undefined) ?? {}))
      walk(sub, `${path}.${key}.${name}`, visit);
  }
  for (const key of ['anyOf', 'allOf', 'oneOf']) {
    for (const [i, sub] of ((node[key] as unknown[] | undefined) ?? []).entries()) {
      walk(sub, `${path}.${key}[${i}]`, visit);
    }
  }
  for (const key of ['items', 'additionalProperties', 'not']) walk(node[key], `${path}.${key}`, visit);
}

/** What a client mapping tool schemas onto a single-`type` dialect cannot read, in either schema. */
function unportable(schema: unknown, where: string): string[] {
  const faults: string[] = [];
  walk(schema, where, (node, path) => {
    if (Array.isArray(node.type)) faults.push(`${path}: type ${JSON.stringify(node.type)}`);
    for (const [pattern, entry] of Object.entries(
      (node.patternProperties as Record<string, Schema> | undefined) ?? {},
    )) {
      if (Object.keys(entry).length === 0) faults.push(`${path}.patternProperties.${pattern}: no keyword`);
    }
  });
  return faults;
}

/**
 * What the OpenAPI 3.0 subset of Gemini's function declarations cannot read in an input: a `type`
 * that is not one string, a map of values (`patternProperties`, `additionalProperties` as a schema),
 * object or array keywords beside another type, a required name with no property.
 */
function unreadableInput(schema: unknown, where: string): string[] {
  const faults: string[] = [];
  walk(schema, where, (node, path) => {
    if ('type' in node && typeof node.type !== 'string') faults.push(`${path}: type ${JSON.stringify(node.type)}`);
    if ('patternProperties' in node) faults.push(`${path}: patternProperties`);
    if (typeof node.additionalProperties === 'object') faults.push(`${path}: additionalProperties map`);
    for (const key of ['properties', 'required', 'additionalProperties']) {
      if (key in node && node.type !== 'object') faults.push(`${path}: ${key} on type ${String(node.type)}`);
    }
    if ('items' in node && node.type !== 'array') faults.push(`${path}: items on type ${String(node.type)}`);
    const properties = (node.properties as Schema | undefined) ?? {};
    for (const name of (node.required as string[] | undefined) ?? []) {
      if (!(name in properties)) faults.push(`${path}: required ${name} is no property`);
    }
  });
  return faults;
}

describeEachBackend('MCP tool schemas: portable to every client', (ctx) => {
  let url: URL;
  let tenant: TestTenant;
  let tools: Tool[];

  before(async () => {
    url = await mcpUrl(ctx.app);
    tenant = await ctx.tenant();
    const mcp = await McpTestClient.connect(url, tenant.token);
    tools = mcp.tools;
    await mcp.close();
  });

  test('no tool schema has a `type` array or a patternProperties entry without a keyword', () => {
    assert.equal(tools.length, 15);
    const faults = tools.flatMap((tool) => [
      ...unportable(tool.inputSchema, `${tool.name}.inputSchema`),
      ...unportable(tool.outputSchema, `${tool.name}.outputSchema`),
    ]);
    assert.deepEqual(faults, []);
  });

  test('every inputSchema reads in a single-type dialect (Gemini function declarations)', () => {
    const faults = tools.flatMap((tool) => unreadableInput(tool.inputSchema, tool.name));
    assert.deepEqual(faults, []);
    // Nullable fields stay nullable: null is how a change clears one.
    const update = tools.find((tool) => tool.name === 'update_lead')?.inputSchema.properties?.fields as Schema;
    const email = (update.properties as Record<string, Schema>).email;
    assert.deepEqual(email?.anyOf, [{ type: 'string', maxLength: 254, format: 'email' }, { type: 'null' }]);
  });

  test("the MCP Inspector's --strict lint finds nothing in tools/list, on the 2025 and the 2026 protocol", async () => {
    for (const era of ['legacy', 'modern']) {
      const args = ['--method', 'tools/list', '--strict', '--protocol-era', era];
      const { code, stdout, stderr } = await runInspector(url, tenant.token, args);
      assert.equal(code, 0, `${era}: ${stderr}`);
      const answer = JSON.parse(stdout) as { result: { tools: Tool[] }; schemaFindings?: unknown[] };
      assert.equal(answer.result.tools.length, 15, era);
      assert.deepEqual(answer.schemaFindings ?? [], [], era);
    }
  });
});
