import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { Answering } from '../../src/http/answering.js';
import { turnsIn } from '../../src/http/tenant-turn.js';

/** Whether `promise` has settled after the event loop turned once. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await sleep(1);
  return done;
}

describe('background work goes after requests (SPEC §23: an import step starts when none is being answered)', () => {
  const answering = new Answering();
  let app: FastifyInstance;
  let release: () => void = () => {};
  let url = '';

  before(async () => {
    app = Fastify();
    answering.install(app);
    app.get('/slow', async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { ok: true };
    });
    app.get('/fast', async () => ({ ok: true }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });

  after(() => app.close());

  it('starts at once on an idle process, and waits while a request is answered', async () => {
    assert.equal(await settled(answering.quiet(60_000)), true);
    const slow = fetch(`${url}/slow`);
    while (answering.count === 0) await sleep(1);
    const quiet = answering.quiet(60_000);
    assert.equal(await settled(quiet), false, 'waits for the request in flight');
    // A request that starts and ends meanwhile does not end the wait: one is still in flight.
    assert.equal((await fetch(`${url}/fast`)).status, 200);
    assert.equal(await settled(quiet), false);
    release();
    assert.equal((await slow).status, 200);
    await quiet;
    assert.equal(answering.count, 0);
  });

  it('waits at most its bound: a request that never ends slows background work, never stops it', async () => {
    const slow = fetch(`${url}/slow`);
    while (answering.count === 0) await sleep(1);
    const started = performance.now();
    await answering.quiet(30);
    assert.ok(performance.now() - started >= 25);
    release();
    await slow;
  });

  it('counts a request its client abandoned as over once its connection closes', async () => {
    const abandoned = request(`${url}/slow`);
    abandoned.on('error', () => {});
    abandoned.end();
    while (answering.count === 0) await sleep(1);
    const started = performance.now();
    const quiet = answering.quiet(5_000);
    abandoned.destroy();
    await quiet;
    assert.ok(performance.now() - started < 4_000, 'ended by the close, not the bound');
    assert.equal(answering.count, 0);
    release();
  });

  it('counts requests answered by inject as the tests send them', async () => {
    assert.equal((await app.inject({ method: 'GET', url: '/fast' })).statusCode, 200);
    await sleep(1);
    assert.equal(answering.count, 0);
  });

  it("runs a tenant's background turn (an import step) once the request in flight is answered", async () => {
    const turn = turnsIn(() => undefined, answering);
    let stepped = false;
    const slow = fetch(`${url}/slow`);
    while (answering.count === 0) await sleep(1);
    const step = turn('tenant', async () => {
      stepped = true;
    });
    await sleep(10);
    assert.equal(stepped, false, 'the step waits while the request is answered');
    release();
    await Promise.all([slow, step]);
    assert.equal(stepped, true);
  });
});
