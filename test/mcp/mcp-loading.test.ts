import assert from 'node:assert/strict';
import { register } from 'node:module';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MessageChannel } from 'node:worker_threads';

/**
 * Every module this process resolves from here on, reported by a loader hook (it runs on a thread
 * of its own, so its reports arrive as messages). Registered before the app is imported: the
 * imports below are dynamic for that reason.
 */
const resolved = new Set<string>();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url: string) => resolved.add(url));
port1.unref();
const RECORD_RESOLVED = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}`;
register(`data:text/javascript,${encodeURIComponent(RECORD_RESOLVED)}`, {
  data: { port: port2 },
  transferList: [port2],
});

const { API, TestContext } = await import('../helpers/test-app.js');
const ctx = new TestContext('pglite');
const sdkModules = () => [...resolved].filter((url) => url.includes('/@modelcontextprotocol/'));
/** Lets the hook thread's reports of the imports just made arrive. */
const settle = () => sleep(200);

before(() => ctx.start());
after(() => ctx.stop());

test('the MCP SDK is loaded by the first MCP request, not at start: a server never asked over MCP does not carry it', async () => {
  const { token } = await ctx.tenant();
  const lead = await ctx.request('POST', `${API}/leads`, { token, body: { name: 'Ana', email: 'ana@example.com' } });
  assert.equal(lead.status, 201);
  await settle();
  assert.ok(resolved.size > 0, 'the hook reports the modules the app loads');
  assert.deepEqual(sdkModules(), []);

  const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
  const headers = { accept: 'application/json, text/event-stream' };
  const [first, second] = await Promise.all([
    ctx.request('POST', `${API}/mcp`, { token, body, headers }),
    ctx.request('POST', `${API}/mcp`, { token, body, headers }),
  ]);
  assert.equal(first.status, 200);
  assert.deepEqual(first.body, second.body);
  assert.ok(first.body.result.tools.some((tool: { name: string }) => tool.name === 'create_lead'));
  await settle();
  assert.ok(sdkModules().length > 0, 'the first MCP request loads the SDK');
});
