import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { PROCESS_ADMIN_TOKEN, tenantWithToken } from '../helpers/admin-api.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { type ServerProcess, startServer } from '../helpers/server-process.js';
import { BACKENDS, postgresTestUrl, skipUnless, withDatabase } from '../helpers/test-database.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const url = postgresTestUrl();
const API = '/api/external/v1';

const WEBHOOK_ENV = {
  FUNIL_ADMIN_TOKEN: PROCESS_ADMIN_TOKEN,
  FUNIL_WEBHOOKS_ALLOW_HTTP: 'true',
  FUNIL_WEBHOOKS_ALLOW_PRIVATE: 'true',
};
const SCOPES = ['leads:read', 'leads:write', 'webhooks:read', 'webhooks:write'];

async function call(server: ServerProcess, token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${API}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as never };
}

/**
 * The ids of the tenant's `lead.created` events, once the feed shows `count` of them. The feed shows
 * an event only when no transaction that began before it is still open anywhere on the server (SPEC
 * §14's commit order), another test file's included: read at once, it missed one in a run on Node 24.
 */
async function createdEventIds(server: ServerProcess, token: string, count: number): Promise<string[]> {
  let ids: string[] = [];
  await until(
    `${count} lead.created events in the feed`,
    async () => {
      const feed = await call(server, token, 'GET', '/events?types=lead.created&limit=1000');
      ids = (feed.body as { id: string }[]).map((event) => event.id);
      return ids.length >= count;
    },
    10_000,
  );
  return ids;
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The value of `funil_webhook_attempts_total{outcome}` on `server` (0 when absent). */
async function attempts(server: ServerProcess, outcome: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`funil_webhook_attempts_total{outcome="${outcome}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

type Storage = { env: Record<string, string>; drop(): Promise<void> };

async function postgresStorage(): Promise<Storage> {
  const name = `funil_webhooks_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  await admin(`create database ${name}`);
  return {
    env: { DATABASE_URL: withDatabase(url as string, name) },
    drop: () => admin(`drop database if exists ${name} with (force)`),
  };
}

async function embeddedStorage(): Promise<Storage> {
  const dir = await scratchDir('funil-webhooks-');
  return { env: { FUNIL_DATA_DIR: dir }, drop: () => rm(dir, { recursive: true, force: true }) };
}

// The suites below mostly wait (on answers held 5 s, on jobs to expire): they wait side by side.
describe('webhook deliveries of server processes', { concurrency: true }, () => {
  for (const backend of BACKENDS) {
    describe(`webhooks across a kill -9 (SPEC §15) [${backend}]`, { skip: skipUnless(backend) }, () => {
      const receiver = new WebhookReceiver();
      let storage: Storage;
      const servers: ServerProcess[] = [];
      before(async () => {
        await receiver.start();
        storage = backend === 'postgres' ? await postgresStorage() : await embeddedStorage();
      });
      after(async () => {
        await Promise.all(servers.map((server) => server.stop(5_000)));
        await receiver.close();
        await storage.drop();
      });

      it('every event committed before the kill is delivered, at least once, after a restart', async (t) => {
        const env = { ...WEBHOOK_ENV, ...storage.env };
        const first = await startServer(env);
        servers.push(first);
        const { token } = await tenantWithToken(first, 'Crash', SCOPES);
        const hook = await call(first, token, 'POST', '/webhooks', {
          url: receiver.url('/crash'),
          events: ['lead.created'],
        });
        assert.equal(hook.status, 201);
        // Answers that take 5 s: the kill finds every attempt that reached the receiver still in flight.
        receiver.delayMs = 5_000;
        const leads = 40;
        for (let n = 0; n < leads; n++) {
          const created = await call(first, token, 'POST', '/leads', { name: `Lead ${n}`, phone: String(n) });
          assert.equal(created.status, 201);
        }
        await until('attempts in flight before the kill', () => receiver.idsAt('/crash').size >= 3, 30_000);
        first.child.kill('SIGKILL');
        await first.exited();
        const inFlight = [...receiver.idsAt('/crash').keys()];
        receiver.delayMs = 0;

        const second = await startServer(env);
        servers.push(second);
        const restarted = performance.now();
        const expected = await createdEventIds(second, token, leads);
        assert.equal(expected.length, leads);
        await until(
          'every event delivered after the restart',
          () => expected.every((id) => receiver.idsAt('/crash').has(id)),
          120_000,
        );
        // An attempt cut off by the kill is made again (its answer never came): on PostgreSQL once its
        // job expires, as another instance could be making it; on the embedded database, whose one
        // process is the restarted one, as its queue opens (after the job's retry delay, 5 s).
        await until(
          'the attempts cut off by the kill made again',
          () => inFlight.every((id) => (receiver.idsAt('/crash').get(id) ?? 0) >= 2),
          120_000,
        );
        const againAfterMs = Math.round(performance.now() - restarted);
        t.diagnostic(
          `kill -9 [${backend}]: ${inFlight.length} attempts in flight at the kill, made again ${againAfterMs} ms after ` +
            `the restart; all ${leads} events delivered`,
        );
        // Their jobs' expiry (20 s after they started, before the kill) would have offered them later.
        if (backend === 'pglite') assert.ok(againAfterMs < 20_000, `made again ${againAfterMs} ms after the restart`);
      });
    });
  }

  describe('webhooks from two instances on one PostgreSQL (SPEC §15)', { skip: skipUnless('postgres') }, () => {
    const receiver = new WebhookReceiver();
    let storage: Storage;
    let servers: ServerProcess[] = [];
    before(async () => {
      await receiver.start();
      storage = await postgresStorage();
    });
    after(async () => {
      await Promise.all(servers.map((server) => server.stop(5_000)));
      await receiver.close();
      await storage.drop();
    });

    it('deliver every event exactly once between them, with no duplicate attempt', async () => {
      const env = { ...WEBHOOK_ENV, ...storage.env };
      servers = [await startServer(env)];
      servers.push(await startServer(env));
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const { token } = await tenantWithToken(a, 'Pair', SCOPES);
      const hook = await call(b, token, 'POST', '/webhooks', { url: receiver.url('/pair'), events: ['*'] });
      assert.equal(hook.status, 201);
      const leads = 100;
      await Promise.all(
        Array.from({ length: 10 }, async (_, worker) => {
          for (let n = worker; n < leads; n += 10) {
            const created = await call(n % 2 ? a : b, token, 'POST', '/leads', { name: `Lead ${n}`, phone: String(n) });
            assert.equal(created.status, 201);
          }
        }),
      );
      const expected = await createdEventIds(a, token, leads);
      assert.equal(expected.length, leads);
      await until('every event delivered', () => expected.every((id) => receiver.idsAt('/pair').has(id)), 60_000);
      // Time for a duplicate, were there one, to arrive.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const ids = receiver.idsAt('/pair');
      assert.equal(ids.size, leads);
      assert.deepEqual(
        [...ids].filter(([, count]) => count > 1),
        [],
      );
      const succeeded = (await attempts(a, 'succeeded')) + (await attempts(b, 'succeeded'));
      assert.equal(succeeded, leads);
      assert.equal((await attempts(a, 'duplicate')) + (await attempts(b, 'duplicate')), 0);
    });
  });
});
