import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import pino from 'pino';
import { issueToken } from '../../src/admin/issue-token.js';
import { TenantRepository } from '../../src/admin/tenant.repository.js';
import { TokenRepository } from '../../src/admin/token.repository.js';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/database.js';
import { ADMIN_API, ADMIN_TOKEN, API, describeEachBackend, type TestTenant, testConfig } from '../helpers/test-app.js';
import { createTestDatabase, postgresTestUrl, type TestDatabase } from '../helpers/test-database.js';

const silent = pino({ level: 'silent' });
const LIMIT = 5;

describeEachBackend(
  'rate limits in memory (SPEC §10)',
  (ctx) => {
    let tenant: TestTenant;
    let other: TestTenant;

    it('setup', async () => {
      tenant = await ctx.tenant();
      other = await ctx.tenant('Other');
    });

    it('counts down RateLimit-Remaining on every answer, then answers 429 rate_limited with Retry-After', async () => {
      for (let i = 1; i <= LIMIT; i++) {
        const res = await ctx.request('GET', `${API}/leads`, { token: tenant.token });
        assert.equal(res.status, 200);
        assert.equal(res.headers['ratelimit-limit'], String(LIMIT));
        assert.equal(res.headers['ratelimit-remaining'], String(LIMIT - i));
        assert.ok(Number(res.headers['ratelimit-reset']) > 0);
      }
      const refused = await ctx.request('GET', `${API}/leads`, { token: tenant.token });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.success, false);
      assert.equal(refused.body.code, 'rate_limited');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal(refused.headers['ratelimit-remaining'], '0');
      assert.ok(refused.headers['x-request-id']);
      // Refused before anything is written.
      const write = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'x', phone: '1' } });
      assert.equal(write.status, 429);
    });

    it('keeps one budget per token: another token is not affected', async () => {
      const res = await ctx.request('GET', `${API}/leads`, { token: other.token });
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-remaining'], String(LIMIT - 1));
    });

    it('puts the headers on error answers too (403, 404)', async () => {
      const forbidden = await ctx.request('GET', `${API}/leads`, { token: null });
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.headers['ratelimit-limit'], String(LIMIT));
      const missing = await ctx.request('GET', `${API}/leads/01900000-0000-7000-8000-000000000000`, {
        token: other.token,
      });
      assert.equal(missing.status, 404);
      assert.ok(missing.headers['ratelimit-remaining'] !== undefined);
    });

    it('never limits /health and /ready', async () => {
      for (let i = 0; i < LIMIT * 3; i++) {
        const health = await ctx.request('GET', '/health');
        assert.equal(health.status, 200);
        assert.equal(health.headers['ratelimit-limit'], undefined);
      }
      assert.equal((await ctx.request('GET', '/ready')).status, 200);
    });

    it('gives the admin API its own limit', async () => {
      const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
      for (let i = 0; i < 3; i++) {
        assert.equal((await ctx.request('GET', `${ADMIN_API}/tenants`, { headers: auth })).status, 200);
      }
      const refused = await ctx.request('GET', `${ADMIN_API}/tenants`, { headers: auth });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 'rate_limited');
    });
  },
  { FUNIL_RATE_LIMIT: String(LIMIT), FUNIL_ADMIN_RATE_LIMIT: '3' },
);

const redisUrl = process.env.FUNIL_TEST_REDIS_URL || undefined;
if (!redisUrl && process.env.CI) throw new Error('CI must run the Redis suites: set FUNIL_TEST_REDIS_URL');
const skip = !redisUrl
  ? 'FUNIL_TEST_REDIS_URL is not set'
  : !postgresTestUrl()
    ? 'FUNIL_TEST_DATABASE_URL is not set (two instances need one shared database)'
    : false;

describe('two instances on one database and one Redis (SPEC §7, §10)', { skip }, () => {
  let shared: TestDatabase;
  let instances: FastifyInstance[] = [];
  let tenant: TestTenant;
  let writer: string;

  before(async () => {
    // A Redis database of its own, emptied, so that no earlier run's counters are in the way.
    const url = new URL(redisUrl as string);
    url.pathname = `/${1 + ((randomBytes(1)[0] as number) % 15)}`;
    const redis = new Redis(url.toString());
    await redis.flushdb();
    redis.disconnect();

    const env = { FUNIL_RATE_LIMIT: String(LIMIT), REDIS_URL: url.toString() };
    shared = await createTestDatabase('postgres');
    const second = await openDatabase({ databaseUrl: shared.url, dataDir: '', poolSize: 2, logger: silent });
    instances = await Promise.all(
      [shared.database, second].map((database) => buildApp({ config: testConfig(env), database, logger: silent })),
    );
    const tenantRow = await new TenantRepository(shared.database.db).create('Shared');
    const issued = await issueToken(new TokenRepository(shared.database.db), {
      tenantId: tenantRow.id,
      name: 'shared',
      scopes: ['leads:read', 'leads:write'],
      expiresAt: null,
    });
    tenant = { id: tenantRow.id, token: issued.token, tokenId: issued.id };
    const writerToken = await issueToken(new TokenRepository(shared.database.db), {
      tenantId: tenantRow.id,
      name: 'writer',
      scopes: ['leads:write'],
      expiresAt: null,
    });
    writer = writerToken.token;
  });
  after(async () => {
    await Promise.all(instances.map((app) => app.close()));
    await shared?.destroy();
  });

  it('refuse on one instance an Idempotency-Key reused on the other, and replay the same request', async () => {
    const post = (app: FastifyInstance, body: object) =>
      app.inject({
        method: 'POST',
        url: `${API}/leads`,
        headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json', 'idempotency-key': 'k-1' },
        payload: JSON.stringify(body),
      });
    const [a, b] = instances as [FastifyInstance, FastifyInstance];
    const first = await post(a, { name: 'Across instances', phone: '1' });
    assert.equal(first.statusCode, 201);
    const reused = await post(b, { name: 'Another body', phone: '1' });
    assert.equal(reused.statusCode, 422);
    assert.equal(reused.json().code, 'idempotency_key_reused');
    const replay = await post(b, { name: 'Across instances', phone: '1' });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json()._id, first.json()._id);
  });

  it('two instances spend one budget per token', async () => {
    const headers = { authorization: `Bearer ${tenant.token}` };
    const answers: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const app = instances[i % 2] as FastifyInstance;
      const res = await app.inject({ method: 'GET', url: `${API}/leads`, headers });
      answers.push(`${res.statusCode}:${res.headers['ratelimit-remaining']}`);
    }
    assert.deepEqual(answers, ['200:4', '200:3', '200:2', '200:1', '200:0']);
    for (const app of instances) {
      const refused = await app.inject({ method: 'GET', url: `${API}/leads`, headers });
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().code, 'rate_limited');
    }
  });
});
