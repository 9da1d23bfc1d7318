import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { openDatabase } from '../../src/db/database.js';
import { isDatabaseUnavailable } from '../../src/db/errors.js';
import { type HttpAnswer, send, sleep } from '../helpers/http-client.js';
import { type OwnPostgres, ownPostgresSkipReason, startOwnPostgres } from '../helpers/own-postgres.js';
import { printedToken, type ServerProcess, startServer } from '../helpers/server-process.js';
import { assertServiceUnavailable } from './service-unavailable.js';

const API = '/api/external/v1';
/** SPEC §2: every answer within 5 s, even while the database is away. */
const ANSWER_WITHIN_MS = 5_000;
/** SPEC §12: serving again within 10 s of the database's return. */
const RECOVER_WITHIN_MS = 10_000;

interface Call {
  /** `mcp`: a search through the MCP endpoint (SPEC §19), which must fail as REST does: a 503. */
  kind: 'write' | 'read' | 'mcp';
  startedAt: number;
  answer?: HttpAnswer;
  failure?: string;
}

describe('a PostgreSQL outage under load (SPEC §2, §12)', { skip: ownPostgresSkipReason(), timeout: 120_000 }, () => {
  let own: OwnPostgres;
  let running: ServerProcess | undefined;
  const loads = new Set<{ stop(): Promise<void> }>();
  let token: string | undefined;

  before(async () => {
    own = await startOwnPostgres();
  });
  after(async () => {
    // Should a test fail halfway, its load must not run on.
    for (const load of loads) await load.stop();
    await running?.stop(5_000);
    await own?.destroy();
  });

  it('a query cut off by PostgreSQL mid-flight fails as "unavailable", and the process lives on (a checked-out client has an error listener)', async () => {
    const database = await openDatabase({
      databaseUrl: own.url,
      dataDir: '',
      poolSize: 2,
      logger: pino({ level: 'silent' }),
    });
    try {
      const outcome = sql`select pg_sleep(10)`.execute(database.db).then(
        () => 'finished',
        (error: unknown) => error,
      );
      await sleep(300);
      await own.stop('immediate');
      const error = await outcome;
      assert.notEqual(error, 'finished');
      assert.ok(isDatabaseUnavailable(error), `not seen as an outage: ${String(error)}`);
      // Were the client's 'error' event unhandled, this process would have crashed by now.
      await sleep(200);
      assert.equal(await database.ping(1_000), false);
      await own.start();
      assert.equal(await database.ping(3_000), true, 'the same pool serves again once PostgreSQL is back');
    } finally {
      await database.close();
    }
  });

  it('answers 503 within 5 s while PostgreSQL is down, keeps every 201, and serves again within 10 s of its return', async (t) => {
    const { server, token } = await serverOnIt();
    const load = startLoad(server.url, token);

    await sleep(1_500);
    const stopping = performance.now();
    await own.stop('immediate');
    const down = performance.now();
    await sleep(2_000);
    const probes = await probe(server.url);
    await sleep(1_000);
    const restarting = performance.now();
    await own.start();
    const up = performance.now();
    const recoveryMs = await load.recovery(up);
    await load.stop();

    await assertOutage(server, load, probes, { from: down, to: restarting, before: stopping, recoveryMs });
    t.diagnostic(
      `outage (pg_ctl stop -m immediate): ${load.calls.length} requests, ${load.created.size} leads created (all kept), ` +
        `${load.count(503)} answered 503; slowest answer ${load.slowestMs()} ms; ` +
        `recovered ${recoveryMs} ms after PostgreSQL accepted connections again`,
    );
  });

  it('answers 503 within 5 s while PostgreSQL hangs without a word (SIGSTOP), and serves again once it wakes', async (t) => {
    const { server, token } = await serverOnIt();
    const load = startLoad(server.url, token);

    await sleep(1_500);
    const freezing = performance.now();
    await own.signal('SIGSTOP');
    const frozen = performance.now();
    // Longer than FUNIL_REQUEST_TIMEOUT_MS: the requests caught mid-query must have been answered.
    await sleep(5_500);
    const probes = await probe(server.url);
    await sleep(500);
    const thawing = performance.now();
    await own.signal('SIGCONT');
    const thawed = performance.now();
    const recoveryMs = await load.recovery(thawed);
    await load.stop();

    await assertOutage(server, load, probes, { from: frozen, to: thawing, before: freezing, recoveryMs });
    t.diagnostic(
      `outage (SIGSTOP): ${load.calls.length} requests, ${load.created.size} leads created (all kept), ` +
        `${load.count(503)} answered 503; slowest answer ${load.slowestMs()} ms; recovered ${recoveryMs} ms after SIGCONT`,
    );
  });

  it('on SIGTERM while PostgreSQL hangs, still exits 0 within 10 s (SPEC §12)', async (t) => {
    const { server, token } = await serverOnIt();
    const auth = { authorization: `Bearer ${token}` };
    await own.signal('SIGSTOP');
    try {
      // Requests whose queries will never come back hold pool connections.
      const stuck = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          send(`${server.url}${API}/leads`, {
            method: 'POST',
            headers: auth,
            json: { name: `Stuck ${i}`, phone: '1' },
          }),
        ),
      );
      for (const answer of stuck) assertServiceUnavailable(answer, 'a write while PostgreSQL hangs');
      const signalled = performance.now();
      const code = await server.stop(15_000);
      const tookMs = Math.round(performance.now() - signalled);
      assert.equal(code, 0, server.output().slice(-2_000));
      assert.ok(tookMs < 10_000, `exited after ${tookMs} ms`);
      t.diagnostic(`SIGTERM while PostgreSQL hangs: exit ${code} after ${tookMs} ms`);
    } finally {
      await own.signal('SIGCONT');
    }
  });

  /** One Funil process on that PostgreSQL, for every test that needs one. */
  async function serverOnIt(): Promise<{ server: ServerProcess; token: string }> {
    if (!running) {
      running = await startServer({
        DATABASE_URL: own.url,
        FUNIL_RATE_LIMIT: '10000000',
      });
      token = printedToken(running.output());
    }
    assert.ok(token, 'the demo token');
    return { server: running, token };
  }

  /** Writers and readers, each in a loop, recording every call. */
  function startLoad(url: string, token: string) {
    const auth = { authorization: `Bearer ${token}` };
    const calls: Call[] = [];
    const created = new Set<string>();
    let running = true;
    const loop = async (kind: Call['kind'], worker: number) => {
      for (let i = 0; running; i++) {
        const call: Call = { kind, startedAt: performance.now() };
        calls.push(call);
        try {
          call.answer =
            kind === 'write'
              ? await send(`${url}${API}/leads`, {
                  method: 'POST',
                  headers: auth,
                  json: { name: `Outage ${worker}-${i}`, phone: String(i) },
                  timeoutMs: 15_000,
                })
              : kind === 'mcp'
                ? await send(`${url}${API}/mcp`, {
                    method: 'POST',
                    headers: { ...auth, accept: 'application/json, text/event-stream' },
                    json: {
                      jsonrpc: '2.0',
                      id: i,
                      method: 'tools/call',
                      params: { name: 'search_leads', arguments: { limit: 5 } },
                    },
                    timeoutMs: 15_000,
                  })
                : await send(`${url}${API}/leads?limit=5`, { headers: auth, timeoutMs: 15_000 });
          if (call.answer.status === 201) created.add(call.answer.body._id);
          const result = call.answer.body?.result;
          if (kind === 'mcp' && call.answer.status === 200 && (result === undefined || result.isError)) {
            call.failure = `an MCP search answered 200 without its result: ${JSON.stringify(call.answer.body)}`;
          }
        } catch (error) {
          call.failure = String(error);
        }
        // Refused calls come back in a millisecond: do not spin.
        if (call.answer?.status !== 201 && call.answer?.status !== 200) await sleep(25);
      }
    };
    const workers = [
      ...Array.from({ length: 6 }, (_, w) => loop('write', w)),
      ...Array.from({ length: 3 }, (_, w) => loop('read', w)),
      loop('mcp', 0),
    ];
    const load = {
      calls,
      created,
      async stop() {
        loads.delete(load);
        await sleep(500);
        running = false;
        await Promise.all(workers);
      },
      /** Milliseconds from `since` to the end of the first write begun after it that got a 201. */
      async recovery(since: number): Promise<number | undefined> {
        while (performance.now() - since < RECOVER_WITHIN_MS + 2_000) {
          const first = calls.find((c) => c.kind === 'write' && c.startedAt >= since && c.answer?.status === 201);
          if (first?.answer) return Math.round(first.startedAt + first.answer.ms - since);
          await sleep(20);
        }
        return undefined;
      },
      count: (status: number) => calls.filter((c) => c.answer?.status === status).length,
      slowestMs: () => Math.round(Math.max(...calls.map((c) => c.answer?.ms ?? 0))),
    };
    loads.add(load);
    return load;
  }

  async function probe(url: string) {
    return { health: await send(`${url}/health`), ready: await send(`${url}/ready`) };
  }

  async function assertOutage(
    server: ServerProcess,
    load: ReturnType<typeof startLoad>,
    probes: Awaited<ReturnType<typeof probe>>,
    window: { before: number; from: number; to: number; recoveryMs: number | undefined },
  ) {
    assert.equal(server.child.exitCode, null, 'the process is still running');
    assert.equal(probes.health.status, 200, '/health answers during the outage');
    assert.ok(probes.health.ms < 1_000, `/health within a second (${Math.round(probes.health.ms)} ms)`);
    assertServiceUnavailable(probes.ready, '/ready during the outage');
    assert.ok(probes.ready.ms < ANSWER_WITHIN_MS);

    assert.deepEqual(
      load.calls.filter((c) => c.failure).map((c) => c.failure),
      [],
      'every request got a complete answer',
    );
    const answered = load.calls.map((c) => ({ ...c, answer: c.answer as HttpAnswer }));
    assert.deepEqual(
      answered
        .filter((c) => c.answer.ms >= ANSWER_WITHIN_MS)
        .map((c) => `${c.kind} ${c.answer.status} in ${Math.round(c.answer.ms)} ms`),
      [],
      'answered within 5 s',
    );
    assert.deepEqual(
      answered
        .filter((c) => ![200, 201, 503].includes(c.answer.status))
        .map((c) => `${c.kind} ${c.answer.status} ${JSON.stringify(c.answer.body)}`),
      [],
      'only successes and 503s: never a 500',
    );
    for (const call of answered.filter((c) => c.answer.status === 503))
      assertServiceUnavailable(call.answer, call.kind);

    const during = answered.filter((c) => c.startedAt >= window.from && c.startedAt + c.answer.ms <= window.to);
    assert.ok(['write', 'read', 'mcp'].every((kind) => during.some((c) => c.kind === kind)));
    assert.deepEqual(
      during.filter((c) => c.answer.status !== 503).map((c) => `${c.kind} ${c.answer.status}`),
      [],
      'while PostgreSQL is away every request is a 503',
    );
    assert.ok(
      answered.some((c) => c.startedAt < window.before && c.answer.status === 201),
      'it served before the outage',
    );

    assert.ok(window.recoveryMs !== undefined, `no lead was created within ${RECOVER_WITHIN_MS} ms of the return`);
    assert.ok(window.recoveryMs <= RECOVER_WITHIN_MS, `recovered in ${window.recoveryMs} ms`);
    assert.equal((await send(`${server.url}/ready`)).status, 200, '/ready is 200 again');

    const client = new pg.Client({ connectionString: own.url });
    await client.connect();
    try {
      const ids = [...load.created];
      const found = await client.query('select count(*)::int as n from leads where id = any($1::uuid[])', [ids]);
      assert.equal(found.rows[0].n, ids.length, 'every lead answered 201 is in the database');
    } finally {
      await client.end();
    }
  }
});
