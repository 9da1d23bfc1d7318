import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { printedToken, type ServerProcess, startServer } from '../helpers/server-process.js';
import { migratedDataDir } from '../helpers/test-database.js';

const API = '/api/external/v1';

describe('the embedded server as a process (SPEC §9, §11, §12)', () => {
  let dataDir: string;
  const running: ServerProcess[] = [];
  const start = async (env: Record<string, string> = {}, options?: { waitReady?: boolean }) => {
    const server = await startServer({ FUNIL_DATA_DIR: dataDir, ...env }, options);
    running.push(server);
    return server;
  };

  before(async () => {
    dataDir = await migratedDataDir('funil-restart-');
  });
  after(async () => {
    await Promise.all(running.map((server) => server.stop(5_000)));
    await rm(dataDir, { recursive: true, force: true });
  });

  let token: string;
  let leadId: string;

  it('prints a full-scope demo token on the first start, with its expiry in 30 days, and it works', async () => {
    const server = await start();
    token = printedToken(server.output()) ?? '';
    assert.match(token, /^fnl_[A-Za-z0-9_-]{43,}$/);
    const expiry = server.output().match(/It expires at (\S+) \(in 30 days\)/)?.[1];
    const daysAhead = (Date.parse(expiry ?? '') - Date.now()) / 86_400_000;
    assert.ok(daysAhead > 29.9 && daysAhead <= 30, `the demo token expires ${daysAhead} days from now`);
    const created = await fetch(`${server.url}${API}/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Survives restarts', phone: '123' }),
    });
    assert.equal(created.status, 201);
    leadId = ((await created.json()) as { _id: string })._id;
    const customers = await fetch(`${server.url}${API}/customers`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(customers.status, 200);
  });

  it('refuses a second server on the same data directory, with a clear message', async () => {
    const second = await start({}, { waitReady: false });
    assert.equal(await second.exited(), 1);
    assert.match(second.output(), /in use by another Funil process \(PID \d+\)/);
  });

  it('exits 0 on SIGTERM', async () => {
    const server = running[0];
    assert.ok(server);
    assert.equal(await server.stop(), 0);
  });

  it('keeps the data across a restart and prints no new token (SPEC §11)', async () => {
    const server = await start({ LOG_LEVEL: 'info' });
    assert.equal(printedToken(server.output()), undefined);
    const read = await fetch(`${server.url}${API}/leads/${leadId}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as { name: string }).name, 'Survives restarts');
    // The MCP tools' schemas are compiled on the first MCP request: their warnings would show only then.
    const tools = await fetch(`${server.url}${API}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(tools.status, 200);
    // Lines are written in batches (src/logger.ts), yet a request's is out within a moment…
    const readLine = `"method":"GET","route":"${API}/leads/:id","status":200`;
    for (let waited = 0; !server.output().includes(readLine); waited += 20) {
      assert.ok(waited < 3_000, `no log line of the read after ${waited} ms:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(await server.stop(), 0);
    // SPEC §12: what a restarted server writes is its JSON log lines, with no stray warning between them.
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line !== '');
    assert.ok(lines.some((line) => line.includes('Funil is ready')));
    // …and every line held when the process exits is written: the last one it logs included.
    assert.match(lines.at(-1) ?? '', /"msg":"shut down"/);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `not a log line: ${line}`);
  });

  it('keeps an acknowledged write after kill -9 (SPEC §11)', async () => {
    const server = await start();
    const created = await fetch(`${server.url}${API}/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Acknowledged', email: 'ack@example.com' }),
    });
    assert.equal(created.status, 201);
    const { _id } = (await created.json()) as { _id: string };
    server.child.kill('SIGKILL');
    await server.exited();

    const restarted = await start();
    const read = await fetch(`${restarted.url}${API}/leads/${_id}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(read.status, 200);
  });

  it('takes over a stale lock left by a dead process', async () => {
    await Promise.all(running.map((server) => server.stop(5_000)));
    await writeFile(join(dataDir, 'funil.lock'), '999999\n');
    const server = await start();
    const health = await fetch(`${server.url}/ready`);
    assert.equal(health.status, 200);
  });
});
