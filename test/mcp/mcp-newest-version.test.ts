import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpTestClient, mcpUrl, postMcp } from '../helpers/mcp-client.js';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const NEWEST = '2026-07-28';

/** The official v2 client, negotiating by `server/discover` (`auto`) or pinned to a version. */
async function newestClient(url: URL, token: string, mode: 'auto' | { pin: string }) {
  const client = new Client({ name: 'funil-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${token}`, 'accept-language': 'en' } },
  });
  await client.connect(transport);
  return client;
}

describeEachBackend('MCP endpoint: protocol version 2026-07-28 beside the 2025 versions', (ctx) => {
  let url: URL;
  let tenant: TestTenant;

  before(async () => {
    url = await mcpUrl(ctx.app);
    tenant = await ctx.tenant();
  });

  test('server/discover offers 2026-07-28, with the capabilities and instructions', async () => {
    const discover = {
      jsonrpc: '2.0',
      id: 1,
      method: 'server/discover',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': NEWEST,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    };
    const headers = { 'mcp-protocol-version': NEWEST, 'mcp-method': 'server/discover' };
    const res = await postMcp(url, tenant.token, discover, headers);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = await res.json();
    assert.deepEqual(body.result.supportedVersions, [NEWEST]);
    assert.deepEqual(body.result.capabilities.tools, { listChanged: false });
    assert.match(body.result.instructions, /convert_lead/);
  });

  test('the official client negotiates 2026-07-28, lists the tools and calls them as on 2025-11-25', async () => {
    const client = await newestClient(url, tenant.token, 'auto');
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      assert.equal(client.getNegotiatedProtocolVersion(), NEWEST);
      const { tools } = await client.listTools();
      const legacy = await McpTestClient.connect(url, tenant.token);
      try {
        assert.equal(legacy.transport.protocolVersion, '2025-11-25');
        assert.deepEqual(tools, legacy.tools);
      } finally {
        await legacy.close();
      }
      const created = await client.callTool({ name: 'create_lead', arguments: { name: 'Newest', phone: '1' } });
      assert.equal(created.isError, undefined);
      const lead = (created.structuredContent as { lead: { _id: string; name: string } }).lead;
      assert.equal(lead.name, 'Newest');
      const read = await ctx.request('GET', `/api/external/v1/leads/${lead._id}`, { token: tenant.token });
      assert.equal(read.body.name, 'Newest');

      const refused = await client.callTool({ name: 'create_lead', arguments: { phone: '1' } });
      assert.equal(refused.isError, true);
      assert.equal((refused.structuredContent as { code: string }).code, 'validation_failed');
      await assert.rejects(client.callTool({ name: 'drop_database', arguments: {} }), (error: unknown) => {
        assert.ok(error instanceof ProtocolError);
        assert.equal(error.code, -32602);
        return true;
      });
    } finally {
      await client.close();
    }
  });

  test('a client pinned to 2026-07-28 is served; arguments that are not an object fail the tool there too', async () => {
    const client = await newestClient(url, tenant.token, { pin: NEWEST });
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), NEWEST);
      const refused = await client.callTool({ name: 'create_lead', arguments: [] as never });
      assert.equal(refused.isError, true);
      assert.deepEqual((refused.structuredContent as { details: unknown }).details, [
        { field: 'arguments', message: "Field 'arguments': must be of type object." },
      ]);
    } finally {
      await client.close();
    }
  });
});
