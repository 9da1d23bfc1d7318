import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { openDatabase } from '../../src/db/database.js';
import { startHealthProbe } from '../helpers/health-probe.js';
import { type HttpAnswer, send, sleep } from '../helpers/http-client.js';
import { printedToken, type ServerProcess, startServer } from '../helpers/server-process.js';
import { API, TestContext } from '../helpers/test-app.js';
import { migratedDataDir } from '../helpers/test-database.js';
import { assertServiceUnavailable } from './service-unavailable.js';
import { createStore, type Store } from './stores.js';

const LEADS = '/api/external/v1/leads';
const BURST = Number(process.env.FUNIL_BURST_REQUESTS ?? 2_000);
const CONCURRENCY = Number(process.env.FUNIL_BURST_CONCURRENCY ?? 300);
/** SPEC §12: `/health` answers within a second even under load. */
const HEALTH_WITHIN_MS = 1_000;

describe('the embedded database under a backlog of queries', () => {
  it('lets the event loop turn between queries, so that /health, timers and signals are served (PGlite runs on this thread)', async () => {
    const dataDir = await migratedDataDir('funil-backlog-');
    // However slow the machine, the queries must wait for their turn rather than give up.
    const database = await openDatabase({
      dataDir,
      poolSize: 1,
      logger: pino({ level: 'silent' }),
      connectTimeoutMs: 60_000,
    });
    try {
      let turns = 0;
      const ticker = setInterval(() => turns++, 1);
      const started = performance.now();
      const results = await Promise.allSettled(
        Array.from({ length: 100 }, () => sql`select count(*) from generate_series(1, 20000)`.execute(database.db)),
      );
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.deepEqual(
        rejected.map((r) => String(r.reason)),
        [],
      );
      const tookMs = performance.now() - started;
      clearInterval(ticker);
      // Back to back, 100 queries would not let a single timer fire until the last one is done.
      assert.ok(turns >= 20, `the loop turned ${turns} times in ${Math.round(tookMs)} ms of queries`);
    } finally {
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('load shedding on event-loop delay', () => {
  // About half the mean delay of the lag below (100 ms of work at every turn of the loop), and still
  // far above an ordinary busy machine's.
  const ctx = new TestContext('pglite', { FUNIL_MAX_EVENT_LOOP_DELAY_MS: '50' });
  before(() => ctx.start());
  after(() => ctx.stop());
  // Straight through inject: ctx.request's contract check would load the OpenAPI document first,
  // and that request could be shed as well.
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const response = await ctx.app.inject({ method: 'GET', url, headers });
    const json = String(response.headers['content-type']).startsWith('application/json');
    return { status: response.statusCode, headers: response.headers, body: json ? response.json() : response.body };
  };

  it('while the event loop lags, answers 503 service_unavailable + Retry-After, but /health 200; then serves again', async () => {
    const tenant = await ctx.tenant();
    const auth = { authorization: `Bearer ${tenant.token}`, 'accept-language': 'en' };
    // The loop lags as under a flood of work: 100 ms of it at every turn. Not one long stall: the
    // delay histogram forgets the interval it is in when the sampler resets it, so a single stall
    // can go unseen when the sampler's timer happens to run first after it.
    const lag = setInterval(() => {
      const until = performance.now() + 100;
      while (performance.now() < until) {
        // Busy on purpose.
      }
    }, 1);
    let shed: Awaited<ReturnType<typeof get>>;
    let health: Awaited<ReturnType<typeof get>>;
    try {
      for (let i = 0; !ctx.app.isUnderPressure() && i < 50; i++) await sleep(5);
      [shed, health] = await Promise.all([get(`${API}/leads`, auth), get('/health')]);
    } finally {
      clearInterval(lag);
    }
    assertServiceUnavailable(shed, 'a request while the loop lags');
    assert.equal(shed.body.error, 'The server is overloaded. Try again shortly.');
    assert.equal(health.status, 200, '/health is never shed');

    // Once the loop is calm again (on a busy machine that may take a few samples), it serves.
    let served = await get(`${API}/leads`, auth);
    for (let i = 0; served.status === 503 && i < 100; i++) {
      await sleep(100);
      served = await get(`${API}/leads`, auth);
    }
    assert.equal(served.status, 200);
  });
});

describe('a burst far above capacity (SPEC §2, §12)', { timeout: 120_000 }, () => {
  let store: Store;
  let server: ServerProcess | undefined;
  let probe: Awaited<ReturnType<typeof startHealthProbe>> | undefined;
  before(async () => {
    store = await createStore('pglite');
  });
  after(async () => {
    await probe?.stop();
    await server?.stop(5_000);
    await store?.destroy();
  });

  it('sheds with 503 + Retry-After in the SPEC §2 shape, never a 500, and /health keeps answering within a second', async (t) => {
    server = await startServer({
      ...store.env,
      FUNIL_RATE_LIMIT: '10000000',
      // Low enough that this burst trips it on any machine; the default (500 ms) is for production.
      FUNIL_MAX_EVENT_LOOP_DELAY_MS: process.env.FUNIL_BURST_MAX_DELAY_MS ?? '25',
      // And a short wait for the one embedded connection: 300 requests at once queue longer than
      // this however fast the machine, so some are shed there too.
      FUNIL_DB_CONNECT_TIMEOUT_MS: '100',
    });
    const token = printedToken(server.output());
    assert.ok(token);
    const headers = { authorization: `Bearer ${token}`, 'accept-language': 'en' };
    const url = server.url;
    for (let i = 0; i < 20; i++) {
      // A busy machine may trip the low threshold even now: then wait as Retry-After says.
      let seeded = await send(`${url}${LEADS}`, { method: 'POST', headers, json: { name: `Seed ${i}`, phone: '1' } });
      for (let retry = 0; seeded.status === 503 && retry < 20; retry++) {
        await sleep(200);
        seeded = await send(`${url}${LEADS}`, { method: 'POST', headers, json: { name: `Seed ${i}`, phone: '1' } });
      }
      assert.equal(seeded.status, 201);
    }

    // A server that has been serving for a while, not a cold one: its code is compiled (JIT) by now.
    const warmAgent = new Agent({ keepAlive: true, maxSockets: 10 });
    await Promise.all(
      Array.from({ length: 300 }, () => send(`${url}${LEADS}?limit=20&q=burst`, { headers, agent: warmAgent })),
    );
    warmAgent.destroy();

    // The probe: one kept-alive connection, opened before the burst.
    probe = await startHealthProbe(url);

    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const answers: HttpAnswer[] = [];
    const failures: string[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: BURST }, async (_, i) => {
        try {
          answers.push(
            i % 4 === 0
              ? await send(`${url}${LEADS}`, {
                  method: 'POST',
                  headers,
                  json: { name: `Burst ${i}`, email: `b${i}@example.com`, notes: 'x'.repeat(500) },
                  agent,
                  timeoutMs: 30_000,
                })
              : await send(`${url}${LEADS}?limit=20&q=burst`, { headers, agent, timeoutMs: 30_000 }),
          );
        } catch (error) {
          failures.push(String(error));
        }
      }),
    );
    const burstMs = Math.round(performance.now() - started);
    const probes = await probe.stop();
    agent.destroy();

    const statuses = new Map<number, number>();
    for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    const unavailable = answers.filter((answer) => answer.status === 503);
    const shed = unavailable.filter((answer) => answer.body.error === 'The server is overloaded. Try again shortly.');
    t.diagnostic(
      `burst: ${BURST} requests (${CONCURRENCY} at a time) in ${burstMs} ms: ` +
        `${JSON.stringify(Object.fromEntries([...statuses].sort()))}; ${shed.length} shed as overloaded, ` +
        `${unavailable.length - shed.length} as database unavailable (pool wait); ` +
        `/health probed ${probes.length}×, slowest ${Math.round(Math.max(...probes.map((p) => p.ms)))} ms; ${failures.length} failed`,
    );
    assert.equal(server.child.exitCode, null, 'the process is still running');
    assert.deepEqual(failures, [], 'every request was answered');
    // 300 at once with one token, past what a 100 ms wait can serve: abuse, not ordinary use. Its
    // tenant's line refuses what it cannot serve within the bound (429), the rest waits or is shed.
    assert.deepEqual(
      [...statuses.keys()].filter((status) => ![200, 201, 429, 503].includes(status)),
      [],
      `only 200, 201, 429 and 503: ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    for (const answer of answers.filter((a) => a.status === 429)) {
      assert.equal(answer.body.code, 'rate_limited');
      assert.equal(answer.headers['retry-after'], '1');
    }
    for (const answer of unavailable) assertServiceUnavailable(answer, 'a shed request');
    assert.ok(
      unavailable.length + (statuses.get(429) ?? 0) > 0,
      `some requests are refused (${JSON.stringify(Object.fromEntries(statuses))})`,
    );

    // Every 100 ms from the burst's start to its end: at least twice, on a machine fast enough to end
    // the burst in 370 ms (ours, at its fastest, probed three times; the slow check below is the test).
    assert.ok(probes.length >= 2, `probed /health ${probes.length} times during the burst`);
    assert.deepEqual(
      probes.filter((probe) => probe.status !== 200 || probe.ms >= HEALTH_WITHIN_MS),
      [],
      '/health answered 200 within a second every time',
    );
    // Once the burst is over it serves again, by itself.
    let ready = await send(`${url}/ready`);
    let list = await send(`${url}${LEADS}?limit=20`, { headers });
    for (let i = 0; (ready.status !== 200 || list.status !== 200) && i < 50; i++) {
      await sleep(100);
      ready = await send(`${url}/ready`);
      list = await send(`${url}${LEADS}?limit=20`, { headers });
    }
    assert.equal(ready.status, 200, 'ready again within 5 s of the burst');
    assert.equal(list.status, 200, 'serving again within 5 s of the burst');
  });
});
