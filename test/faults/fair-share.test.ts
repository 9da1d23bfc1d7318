import assert from 'node:assert/strict';
import { Agent, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type HttpAnswer, send } from '../helpers/http-client.js';
import { quantile } from '../helpers/quantile.js';
import { API, TestContext, type TestTenant } from '../helpers/test-app.js';
import { assertServiceUnavailable } from './service-unavailable.js';

/** The lists that read the most rows of a large tenant (SPEC §10: "its most expensive lists"). */
const EXPENSIVE_LISTS = [
  '/leads?status=won&source=site-3&limit=1000&sort=name',
  '/leads?scoreMin=99&limit=1000&sort=name',
  '/leads?q=ead&limit=1000&sort=-updatedAt',
  '/leads?source=site-1&limit=1000',
];
const FLOOD_MS = 3_000;

/** `count` leads of every source (site-0…4), status and score, straight into the database. */
async function seedLeads(ctx: TestContext, tenant: TestTenant, count: number): Promise<void> {
  await sql`
    insert into leads (id, tenant_id, name, email, source, status, score, created_by)
    select gen_random_uuid(), ${tenant.id}, 'Lead ' || i, 'lead' || i || '@example.com', 'site-' || (i % 5),
           (array['new','contacted','qualified','won','lost'])[1 + i % 5], i % 101, ${tenant.tokenId}
    from generate_series(1, ${count}::int) as i`.execute(ctx.db);
}

/** How long each 503 took, from the server's reading of its request to the end of the answer. */
function refusalTimes(server: Server): number[] {
  const times: number[] = [];
  server.on('request', (_request, response: ServerResponse) => {
    const started = performance.now();
    response.on('finish', () => {
      if (response.statusCode === 503) times.push(performance.now() - started);
    });
  });
  return times;
}

/** Loops that each send one request after another until the time is up. */
async function loopFor<T>(ms: number, loops: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const until = performance.now() + ms;
  const results: T[] = [];
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      for (let i = loop; performance.now() < until; i += loops) results.push(await run(i));
    }),
  );
  return results;
}

// The embedded default, where one connection serves every tenant, with the default share and line.
describe('fair share between tenants on the embedded database (SPEC §10)', { timeout: 120_000 }, () => {
  const ctx = new TestContext('pglite', { FUNIL_DB_CONNECT_TIMEOUT_MS: '1000' });
  let url: string;
  let flooder: TestTenant;
  let quiet: TestTenant;
  const agent = new Agent({ keepAlive: true, maxSockets: 100 });
  before(async () => {
    await ctx.start();
    url = `${await ctx.app.listen({ host: '127.0.0.1', port: 0 })}${API}`;
    flooder = await ctx.tenant('Flooder');
    quiet = await ctx.tenant('Quiet');
    await seedLeads(ctx, flooder, 3000);
  });
  after(async () => {
    agent.destroy();
    await ctx.stop();
  });
  const get = (token: string, path: string) =>
    send(`${url}${path}`, { agent, headers: { authorization: `Bearer ${token}` }, timeoutMs: 30_000 });

  it("answers another tenant's requests (2xx, never 503) while one floods expensive lists, refusing at once the flooder's lists that could not be served within the bound", async (t) => {
    const [flood, calm] = await Promise.all([
      loopFor(FLOOD_MS, 40, (i) => get(flooder.token, EXPENSIVE_LISTS[i % EXPENSIVE_LISTS.length] as string)),
      loopFor(FLOOD_MS, 2, (i) =>
        i % 2
          ? send(`${url}/leads`, {
              method: 'POST',
              agent,
              headers: { authorization: `Bearer ${quiet.token}` },
              json: { name: `Quiet ${i}`, phone: '1' },
            })
          : get(quiet.token, '/leads?limit=20'),
      ),
    ]);
    const statuses = (answers: HttpAnswer[]) => [...new Set(answers.map((a) => a.status))].sort();
    const admitted = flood.filter((a) => a.status === 200);
    const refused = flood.filter((a) => a.status === 429);
    t.diagnostic(
      `flooder: ${admitted.length} lists answered, ${refused.length} refused, ${flood.length - admitted.length - refused.length} other; quiet tenant: ${calm.length} answers, ` +
        `p50 ${Math.round(
          quantile(
            calm.map((a) => a.ms),
            0.5,
          ),
        )} ms, p95 ${Math.round(
          quantile(
            calm.map((a) => a.ms),
            0.95,
          ),
        )} ms`,
    );
    assert.deepEqual(statuses(calm), [200, 201], 'the quiet tenant is served');
    // The flooder's lists wait in its own line; those that its line could not serve within the
    // bounded wait are refused at once (429). One whose wait the prediction underestimated, on a
    // slow machine, waits out its second and gets its 503: the bounded wait at work.
    const waitedOut = flood.filter((a) => a.status === 503);
    assert.ok(admitted.length > 0, 'the flooder is served too, as fast as its line goes');
    assert.deepEqual(
      flood.filter((a) => ![200, 429, 503].includes(a.status)).map((a) => a.status),
      [],
      'refused, if at all, past what its line can serve',
    );
    for (const answer of refused) {
      assert.equal(answer.body.code, 'rate_limited');
      assert.equal(answer.headers['retry-after'], '1');
      assert.match(answer.body.error, /esperando a vez/);
    }
    for (const answer of waitedOut) assertServiceUnavailable(answer, "a flooder's list that waited out its second");
  });

  it('serves the flooder as an ordinary client again once the flood is over: 16 parallel requests, all answered', async () => {
    const answers = await Promise.all(Array.from({ length: 16 }, () => get(flooder.token, '/leads?limit=5')));
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
  });
});

const DEADLINE_MS = 30_000;
const WAIT_MS = 250;

describe('bounded waiting for a connection (SPEC §10)', { timeout: 120_000 }, () => {
  // 200 readers over 50 tenants: four each, all together far more than one connection serves within
  // the wait for a connection. The wait short (250 ms): with the default 1 s, one CI run served the
  // whole crowd within it (813 pages in 3 s, none refused: the test's premise gone, not the rule).
  // The request deadline out of the way (it answers 503 too, in the same body), so that every 503
  // here is the wait's.
  const ctx = new TestContext('pglite', {
    FUNIL_DB_CONNECT_TIMEOUT_MS: String(WAIT_MS),
    FUNIL_REQUEST_TIMEOUT_MS: String(DEADLINE_MS),
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 200 });
  before(() => ctx.start());
  after(async () => {
    agent.destroy();
    await ctx.stop();
  });

  it('answers 200 concurrent readers with a page, a 429 at once, or a 503 + Retry-After given after the wait for a connection, never after the request deadline', async (t) => {
    const url = `${await ctx.app.listen({ host: '127.0.0.1', port: 0 })}${API}`;
    const refusedInServer = refusalTimes(ctx.app.server);
    const tenants = await Promise.all(Array.from({ length: 50 }, (_, i) => ctx.tenant(`Reader ${i}`)));
    // Pages of 1,000: 200 of them held the one connection ~0.7 s in that CI run, ~1.5 s here (with
    // pages of 400 and a 1 s wait, a fast run served them all, and tested no refusal).
    for (const tenant of tenants) await seedLeads(ctx, tenant, 1_000);
    // Each token known (and its lookup cached) before the crowd arrives.
    for (const tenant of tenants)
      await send(`${url}/leads?limit=1`, { headers: { authorization: `Bearer ${tenant.token}` } });
    const answers = await loopFor(3_000, 200, (i) =>
      send(`${url}/leads?limit=1000&sort=name`, {
        agent,
        headers: { authorization: `Bearer ${(tenants[i % tenants.length] as TestTenant).token}` },
        timeoutMs: 30_000,
      }),
    );
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 503);
    const turnedAway = answers.filter((a) => a.status === 429);
    const spread = (list: HttpAnswer[]) =>
      [0.01, 0.5, 0.99]
        .map(
          (q) =>
            `p${q * 100} ${Math.round(
              quantile(
                list.map((a) => a.ms),
                q,
              ),
            )} ms`,
        )
        .join(', ');
    const inServer = [0.01, 0.5, 0.99, 1].map((q) => `p${q * 100} ${Math.round(quantile(refusedInServer, q))} ms`);
    t.diagnostic(
      `${served.length} served (${spread(served)}), ${turnedAway.length} refused at once (${spread(turnedAway)}), ${refused.length} waited out (${spread(refused)})`,
    );
    t.diagnostic(`refused, from the server's reading of the request to its answer: ${inServer.join(', ')}`);
    assert.deepEqual(
      answers.filter((a) => a.status !== 200 && a.status !== 429 && a.status !== 503).map((a) => a.status),
      [],
    );
    assert.ok(served.length > 0);
    assert.ok(refused.length + turnedAway.length > 0, 'the crowd is more than one connection serves within the wait');
    for (const answer of turnedAway) {
      assert.equal(answer.body.code, 'rate_limited');
      assert.equal(answer.headers['retry-after'], '1');
    }
    for (const answer of refused) {
      assert.equal(answer.body.code, 'service_unavailable');
      assert.ok(Number(answer.headers['retry-after']) >= 1);
    }
    // The wait for a connection (in all, per request) refuses after about that long, counted from
    // when the server read the request: with the deadline at 30 s, nothing else answers 503. The
    // client's clock also counts the time its request queued before the server read it, on the one
    // event loop this process's server and 200 clients share: with a 1 s wait, 2.1-2.6 s at the
    // median in one run in three on two cores, while the server's own figure stayed within 1.00-1.06 s.
    assert.equal(refusedInServer.length, refused.length);
    assert.ok(
      refusedInServer.every((ms) => ms >= WAIT_MS * 0.95 && ms < WAIT_MS + 600),
      `refused after ${inServer.join(', ')} in the server`,
    );
    assert.ok(
      refused.every((a) => a.ms < DEADLINE_MS / 3),
      `refused after ${spread(refused)}`,
    );
  });
});
