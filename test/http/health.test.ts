import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/database.js';
import { assertError } from '../helpers/assert-error.js';
import { describeEachBackend, testConfig } from '../helpers/test-app.js';

describeEachBackend('health probes', (ctx) => {
  it('GET /health answers 200 without a token (SPEC §12)', async () => {
    const res = await ctx.request('GET', '/health');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  it('GET /ready answers 200 without a token when the database answers (SPEC §12)', async () => {
    const res = await ctx.request('GET', '/ready');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ready' });
  });

  it('probes ignore a bad Authorization header: they need none (SPEC §12)', async () => {
    for (const url of ['/health', '/ready']) {
      const res = await ctx.request('GET', url, { headers: { authorization: 'Bearer fnl_short' } });
      assert.equal(res.status, 200, url);
    }
  });
});

describe('health probes with an unreachable database', () => {
  let app: FastifyInstance;

  before(async () => {
    // Nothing listens on port 1: every connection attempt is refused, as when PostgreSQL is down.
    const database = await openDatabase({
      databaseUrl: 'postgres://funil@127.0.0.1:1/funil',
      dataDir: '',
      poolSize: 1,
      logger: pino({ level: 'silent' }),
    });
    app = await buildApp({ config: testConfig(), database, logger: pino({ level: 'silent' }) });
    await app.ready();
  });

  after(() => app?.close());

  it('GET /ready answers 503 service_unavailable with Retry-After, within 5 s (SPEC §12, §2)', async () => {
    const started = Date.now();
    const res = await app.inject({ method: 'GET', url: '/ready' });
    assert.ok(Date.now() - started < 5_000, 'not answered within 5 s');
    assertError({ status: res.statusCode, headers: res.headers, body: res.json() }, 503, 'service_unavailable');
    assert.ok(Number(res.headers['retry-after']) > 0);
  });

  it('GET /health still answers 200: it never touches the database (SPEC §12)', async () => {
    const res = await app.inject({ method: 'GET', url: '/health' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'ok' });
  });
});
