import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { TokenRepository } from '../../src/auth/token.repository.js';
import { TOOL_SUMMARIES } from '../../src/mcp/mcp-guide.js';
import { McpTestClient, mcpUrl, postMcp } from '../helpers/mcp-client.js';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const LEAD_READ_TOOLS = [
  'find_duplicates',
  'get_lead',
  'lead_history',
  'list_pipelines',
  'pipeline_summary',
  'search_leads',
];
const LEAD_WRITE_TOOLS = ['create_lead', 'set_lead_status', 'update_lead'];
const CUSTOMER_READ_TOOLS = ['get_customer', 'search_customers'];
const CUSTOMER_WRITE_TOOLS = ['create_customer', 'update_customer'];
const ALL_TOOLS = [
  ...LEAD_READ_TOOLS,
  ...LEAD_WRITE_TOOLS,
  'convert_lead',
  'merge_leads',
  ...CUSTOMER_READ_TOOLS,
  ...CUSTOMER_WRITE_TOOLS,
].sort();

const STREAMABLE_ACCEPT = 'application/json, text/event-stream';

function initialize(protocolVersion: string, id = 1) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
}

describeEachBackend('MCP endpoint: transport, authentication, scopes', (ctx) => {
  let url: URL;
  let tenant: TestTenant;

  /** A request as a client's HTTP stack sends it, for what the SDK's client will not send. */
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant.token}`,
        'content-type': 'application/json',
        accept: STREAMABLE_ACCEPT,
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  before(async () => {
    url = await mcpUrl(ctx.app);
    tenant = await ctx.tenant();
  });

  test('the SDK client initialises on the newest protocol version; the server names itself and its tools', async () => {
    const mcp = await McpTestClient.connect(url, tenant.token);
    try {
      assert.equal(mcp.transport.protocolVersion, '2025-11-25');
      assert.equal(mcp.client.getServerVersion()?.name, 'funil');
      assert.match(mcp.client.getInstructions() ?? '', /convert_lead/);
      assert.deepEqual(mcp.toolNames(), ALL_TOOLS);
      // The guide /docs shows names every tool and no other.
      assert.deepEqual(Object.keys(TOOL_SUMMARIES).sort(), ALL_TOOLS);
      const openapi = await ctx.request('GET', '/api/external/v1/openapi.json');
      assert.match(openapi.body.info.description, /POST \/api\/external\/v1\/mcp/);
      for (const name of ALL_TOOLS) assert.match(openapi.body.info.description, new RegExp(`\`${name}\``));
      const byName = new Map(mcp.tools.map((tool) => [tool.name, tool]));
      for (const name of [...LEAD_READ_TOOLS, ...CUSTOMER_READ_TOOLS]) {
        assert.equal(byName.get(name)?.annotations?.readOnlyHint, true, name);
      }
      for (const name of [...LEAD_WRITE_TOOLS, ...CUSTOMER_WRITE_TOOLS, 'convert_lead', 'merge_leads']) {
        const tool = byName.get(name);
        assert.equal(tool?.annotations?.readOnlyHint, false, name);
        assert.ok(tool?.inputSchema.properties?.idempotencyKey, `${name} takes an idempotencyKey`);
      }
      for (const tool of mcp.tools) {
        assert.ok(tool.description && tool.description.length > 80, `${tool.name} is described for a model`);
        assert.equal(tool.outputSchema?.type, 'object');
        assert.doesNotMatch(JSON.stringify(tool.inputSchema), /"transform"|Read-only/, tool.name);
      }
      // The words a model picks by name what is valid.
      const search = byName.get('search_leads');
      const properties = search?.inputSchema.properties as Record<string, { description: string }>;
      assert.match(search?.description ?? '', /"new" \(open\) → "contacted" \(open\) → "qualified"/);
      assert.match(properties.sort?.description ?? '', /createdAt, updatedAt, name, score, lastContact/);
    } finally {
      await mcp.close();
    }
  });

  test('2025-06-18 is spoken when asked for; an unknown version is answered with the newest', async () => {
    for (const [asked, answered] of [
      ['2025-06-18', '2025-06-18'],
      ['2025-11-25', '2025-11-25'],
      ['2024-11-05', '2025-11-25'],
      ['1999-01-01', '2025-11-25'],
    ]) {
      const res = await post(initialize(asked as string));
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('mcp-session-id'), null, 'stateless: no session');
      const body = await res.json();
      assert.equal(body.result.protocolVersion, answered, asked);
    }
  });

  test('a request naming a protocol version the server does not speak is a 400', async () => {
    const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-protocol-version': '2025-03-26' });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error.code, -32000);
    assert.match(body.error.message, /2025-03-26/);
  });

  test('no session: two clients at once, and a tools/call with no initialize before it, are all answered', async () => {
    const [a, b] = await Promise.all([
      McpTestClient.connect(url, tenant.token),
      McpTestClient.connect(url, tenant.token),
    ]);
    try {
      assert.equal(a.transport.sessionId, undefined);
      assert.equal(b.transport.sessionId, undefined);
      const created = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? a : b).call('create_lead', { name: `Parallel ${i}`, phone: `+55 11 9000-000${i}` }),
        ),
      );
      assert.equal(new Set(created.map((answer) => answer.body.lead._id)).size, 6);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    const res = await post(
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search_leads', arguments: { q: 'Parallel' } } },
      { 'mcp-protocol-version': '2025-11-25' },
    );
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.id, 7);
    assert.equal(body.result.structuredContent.items.length, 6);
  });

  test('without a usable token: 401 with WWW-Authenticate: Bearer, in the SPEC §2 shape', async () => {
    const revoked = await ctx.token(tenant.id, ['leads:read']);
    await new TokenRepository(ctx.db).revoke(revoked.id);
    for (const [authorization, challenge] of [
      [undefined, /^Bearer$/],
      ['Bearer fnl_not-a-real-token', /^Bearer error="invalid_token"$/],
      [`Bearer ${revoked.token}`, /^Bearer error="invalid_token"$/],
    ] as const) {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: STREAMABLE_ACCEPT };
      if (authorization) headers.authorization = authorization;
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initialize('2025-11-25')) });
      assert.equal(res.status, 401, String(authorization));
      assert.match(res.headers.get('www-authenticate') ?? '', challenge);
      assert.ok(res.headers.get('x-request-id'));
      const body = await res.json();
      assert.equal(body.success, false);
      assert.equal(body.code, 'unauthorized');
    }
    // The SDK's client gives up with the same answer.
    await assert.rejects(McpTestClient.connect(url, 'fnl_not-a-real-token'), /401|Unauthorized/i);
    // The REST API keeps its 403.
    const rest = await ctx.request('GET', '/api/external/v1/leads', { token: 'fnl_not-a-real-token' });
    assert.equal(rest.status, 403);
  });

  test("tools/list shows only the tools the token's scopes allow; a hidden tool called anyway is forbidden", async () => {
    const cases: [string[], string[]][] = [
      [['leads:read'], LEAD_READ_TOOLS],
      [['leads:write'], LEAD_WRITE_TOOLS],
      [['customers:read'], CUSTOMER_READ_TOOLS],
      [['customers:write'], CUSTOMER_WRITE_TOOLS],
      // Converting may answer a customer that already holds the e-mail: customers:read too (SPEC §5.6).
      [
        ['leads:write', 'customers:write'],
        [...LEAD_WRITE_TOOLS, ...CUSTOMER_WRITE_TOOLS],
      ],
      [
        ['leads:write', 'customers:write', 'customers:read'],
        [...LEAD_WRITE_TOOLS, 'convert_lead', ...CUSTOMER_WRITE_TOOLS, ...CUSTOMER_READ_TOOLS],
      ],
      // The form's scope creates through POST /leads only: no tool.
      [['leads:create'], []],
      [['webhooks:read'], []],
    ];
    for (const [scopes, tools] of cases) {
      const issued = await ctx.token(tenant.id, scopes as never);
      const mcp = await McpTestClient.connect(url, issued.token);
      try {
        assert.deepEqual(mcp.toolNames(), [...tools].sort(), scopes.join(' '));
      } finally {
        await mcp.close();
      }
    }
    const reader = await ctx.token(tenant.id, ['leads:read']);
    const mcp = await McpTestClient.connect(url, reader.token, { 'accept-language': 'en' });
    try {
      const refused = await mcp.call('create_lead', { name: 'Nope', email: 'nope@example.com' });
      assert.equal(refused.isError, true);
      assert.equal(refused.body.code, 'forbidden');
      assert.equal(refused.body.error, 'The token lacks the required scope: leads:write.');
      const conversion = await mcp.call('convert_lead', { id: '00000000-0000-7000-8000-000000000000' });
      assert.equal(conversion.body.code, 'forbidden');
    } finally {
      await mcp.close();
    }
    const leads = await ctx.request('GET', '/api/external/v1/leads', { token: tenant.token, query: { q: 'Nope' } });
    assert.deepEqual(leads.body, []);
  });

  test('an unknown tool is a JSON-RPC error (-32602), not a tool result', async () => {
    const mcp = await McpTestClient.connect(url, tenant.token);
    try {
      await assert.rejects(mcp.client.callTool({ name: 'drop_database', arguments: {} }), (error: unknown) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.code, -32602);
        assert.match(error.message, /Unknown tool: drop_database/);
        return true;
      });
    } finally {
      await mcp.close();
    }
  });

  test('malformed tools/call params: no name is -32602; null arguments are none; other non-objects fail the tool', async () => {
    const headers = { 'mcp-protocol-version': '2025-11-25', 'accept-language': 'en' };
    const call = async (params: unknown) => {
      const res = await post({ jsonrpc: '2.0', id: 'c1', method: 'tools/call', params }, headers);
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(body.id, 'c1');
      return body;
    };
    for (const params of [{}, { name: 42 }, { arguments: {} }, null, 'search_leads']) {
      assert.equal((await call(params)).error?.code, -32602, JSON.stringify(params));
    }
    const none = await call({ name: 'search_leads', arguments: null });
    assert.equal(none.result.isError, undefined);
    assert.ok(Array.isArray(none.result.structuredContent.items));
    for (const args of [[], 'x', 7, true]) {
      const refused = await call({ name: 'create_lead', arguments: args });
      assert.equal(refused.result.isError, true, JSON.stringify(args));
      assert.equal(refused.result.structuredContent.code, 'validation_failed');
      assert.deepEqual(refused.result.structuredContent.details, [
        { field: 'arguments', message: "Field 'arguments': must be of type object." },
      ]);
    }
    assert.equal((await call({ name: 'no_such_tool', arguments: [] })).error?.code, -32602);
    // The scope is checked first, as REST checks it before the body.
    const reader = await ctx.token(tenant.id, ['leads:read']);
    const res = await postMcp(url, reader.token, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'create_lead', arguments: [] },
    });
    assert.equal((await res.json()).result.structuredContent.code, 'forbidden');
  });

  test('a plain tools/call (answered without the SDK) gets the answer the SDK gives the same call', async () => {
    const reader = await ctx.token(tenant.id, ['leads:read']);
    const created = await ctx.api(tenant, 'POST', '/leads', { body: { name: 'Same answer', phone: '11 3333-0000' } });
    const calls: [string, unknown][] = [
      ['search_leads', { q: 'Same answer' }],
      ['get_lead', { id: created.body._id }],
      ['get_lead', { id: '00000000-0000-7000-8000-000000000000' }],
      ['create_lead', { name: '' }],
      ['create_lead', undefined],
      ['no_such_tool', {}],
    ];
    for (const token of [tenant.token, reader.token]) {
      for (const [name, args] of calls) {
        const message = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } };
        const headers = { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25' };
        const plain = await post(message, headers);
        // An empty `_meta` means nothing, and the plain path leaves it to the SDK.
        const viaSdk = await post({ ...message, params: { ...message.params, _meta: {} } }, headers);
        const sdk = await viaSdk.json();
        assert.equal(plain.status, viaSdk.status, `${name} ${JSON.stringify(sdk)}`);
        assert.deepEqual(await plain.json(), sdk, `${name} ${JSON.stringify(args)}`);
      }
    }
  });

  test('the REST Idempotency-Key header means nothing to /mcp; a REST key reused by a tool is refused (422)', async () => {
    const key = `shared-key-${ctx.backend}`;
    const headers = { 'mcp-protocol-version': '2025-11-25', 'idempotency-key': key };
    const create = (id: number) =>
      post(
        {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'create_lead', arguments: { name: 'Header', phone: '1' } },
        },
        headers,
      ).then((res) => res.json());
    const [first, second] = [await create(1), await create(2)];
    assert.notEqual(first.result.structuredContent.lead._id, second.result.structuredContent.lead._id);
    assert.equal(first.result._meta, undefined);

    const rest = await ctx.request('POST', '/api/external/v1/leads', {
      token: tenant.token,
      headers: { 'idempotency-key': key },
      body: { name: 'Rest', phone: '2' },
    });
    assert.equal(rest.status, 201);
    const mcp = await McpTestClient.connect(url, tenant.token);
    try {
      const reused = await mcp.call('create_lead', { name: 'Rest', phone: '2', idempotencyKey: key });
      assert.equal(reused.body.code, 'idempotency_key_reused');
    } finally {
      await mcp.close();
    }
  });

  test('GET and DELETE are 405 (no stream, no session); a batch is a 400; notifications a 202', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${tenant.token}`, accept: STREAMABLE_ACCEPT },
      });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST');
      assert.equal((await res.json()).error.code, -32000);
    }
    const batch = await post([initialize('2025-11-25', 1), initialize('2025-11-25', 2)]);
    assert.equal(batch.status, 400);
    assert.equal((await batch.json()).error.code, -32600);
    const notification = await post(
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { 'mcp-protocol-version': '2025-11-25' },
    );
    assert.equal(notification.status, 202);
  });

  test('what is not an MCP message is refused before the SDK sees it: non-JSON, too large, a poisoned body', async () => {
    const text = await post('hello', { 'content-type': 'text/plain' });
    assert.equal(text.status, 415);
    assert.equal((await text.json()).code, 'unsupported_media_type');
    const large = await post({ ...initialize('2025-11-25'), padding: 'x'.repeat(1024 * 1024) });
    assert.equal(large.status, 413);
    assert.equal((await large.json()).code, 'payload_too_large');
    const poisoned = await post(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_lead","arguments":{"__proto__":{"admin":true},"name":"x"}}}',
    );
    assert.equal(poisoned.status, 400);
    assert.equal((await poisoned.json()).code, 'validation_failed');
    const levels = 200_000;
    const deep = await post(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_lead","arguments":{"name":"x","phone":"1","idempotencyKey":"k","custom":{"tags":${'['.repeat(levels)}${']'.repeat(levels)}}}}}`,
    );
    assert.equal(deep.status, 400);
    assert.equal((await deep.json()).code, 'validation_failed');
    const notRpc = await post({ hello: 'world' });
    assert.equal(notRpc.status, 400);
    // Valid JSON that is no JSON-RPC request: Invalid Request (JSON-RPC 2.0), as the SDK answers it.
    assert.equal((await notRpc.json()).error.code, -32600);
    const noAccept = await post(initialize('2025-11-25'), { accept: 'application/json' });
    assert.equal(noAccept.status, 406);
  });
});

describeEachBackend(
  'MCP endpoint: the rate limit counts each request',
  (ctx) => {
    test('past FUNIL_RATE_LIMIT, a JSON-RPC request is a 429 with Retry-After, as a REST request is', async () => {
      const url = await mcpUrl(ctx.app);
      const tenant = await ctx.tenant();
      // A token's first request is counted against the address it came from, and against the token.
      assert.equal((await ctx.request('GET', '/api/external/v1/token', { token: tenant.token })).status, 200);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await fetch(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${tenant.token}`,
            'content-type': 'application/json',
            accept: STREAMABLE_ACCEPT,
          },
          body: JSON.stringify(initialize('2025-11-25', i)),
        });
        statuses.push(res.status);
        if (res.status === 429) {
          assert.ok(Number(res.headers.get('retry-after')) > 0);
          assert.equal((await res.json()).code, 'rate_limited');
        } else await res.arrayBuffer();
      }
      assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
      // The token's budget is one: REST is refused too.
      const rest = await ctx.request('GET', '/api/external/v1/leads', { token: tenant.token });
      assert.equal(rest.status, 429);
    });
  },
  { FUNIL_RATE_LIMIT: '3' },
);

describeEachBackend(
  'MCP endpoint: the Origin of a browser page (MCP transport, DNS rebinding)',
  (ctx) => {
    const call = async (origin: string | undefined, token: string) => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: STREAMABLE_ACCEPT,
      };
      if (origin !== undefined) headers.origin = origin;
      const res = await fetch(await mcpUrl(ctx.app), {
        method: 'POST',
        headers,
        body: JSON.stringify(initialize('2025-11-25')),
      });
      return { status: res.status, body: (await res.json()) as { code?: string; error?: string } };
    };

    test('refuses a foreign Origin with 403 before anything else; serves a listed one, or none', async () => {
      const tenant = await ctx.tenant();
      const foreign = await call('http://evil.example', tenant.token);
      assert.equal(foreign.status, 403);
      assert.equal(foreign.body.code, 'forbidden');
      // Before the token: a page cannot even learn whether a token is valid.
      assert.equal((await call('http://evil.example', 'fnl_made-up')).status, 403);
      assert.equal((await call('https://app.example.com', tenant.token)).status, 200);
      assert.equal((await call(undefined, tenant.token)).status, 200);
    });
  },
  { FUNIL_CORS_ORIGINS: 'https://app.example.com' },
);
