import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import pino from 'pino';
import { issueToken } from '../../src/admin/issue-token.js';
import { TenantRepository } from '../../src/admin/tenant.repository.js';
import { buildApp } from '../../src/app.js';
import { TokenRepository } from '../../src/auth/token.repository.js';
import { openDatabase } from '../../src/db/database.js';
import { addressKey } from '../../src/http/rate-limit.js';
import {
  ADMIN_API,
  ADMIN_TOKEN,
  API,
  describeEachBackend,
  TestContext,
  type TestTenant,
  testConfig,
} from '../helpers/test-app.js';
import { createTestDatabase, postgresTestUrl, type TestDatabase } from '../helpers/test-database.js';

const silent = pino({ level: 'silent' });
const LIMIT = 5;

/** A token of the right shape (`fnl_` + 43 characters) that names no token at all. */
const madeUpToken = () => `fnl_${randomBytes(32).toString('base64url')}`;

describe('the client address a budget belongs to (SPEC §10)', () => {
  it('is an IPv4 address as it is, an IPv6 address by its /64, an IPv4-mapped one as IPv4', () => {
    assert.equal(addressKey('203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('2001:DB8:0001:0002:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8:1:2::ffff'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
  });
});

describeEachBackend(
  'rate limits in memory (SPEC §10)',
  (ctx) => {
    let tenant: TestTenant;
    let other: TestTenant;
    const leads = (token: string | null, remoteAddress: string) =>
      ctx.request('GET', `${API}/leads`, { token, remoteAddress });

    before(async () => {
      tenant = await ctx.tenant();
      other = await ctx.tenant('Other');
    });

    it('counts a token not yet known against its address, then against the token, whose counters every answer shows; past it, 429 rate_limited with Retry-After', async () => {
      for (let i = 1; i <= LIMIT; i++) {
        const res = await leads(tenant.token, '192.0.2.1');
        assert.equal(res.status, 200);
        assert.equal(res.headers['ratelimit-limit'], String(LIMIT));
        assert.equal(res.headers['ratelimit-remaining'], String(LIMIT - i), "the token's budget");
        assert.ok(Number(res.headers['ratelimit-reset']) > 0);
      }
      const refused = await leads(tenant.token, '192.0.2.1');
      assert.equal(refused.status, 429);
      assert.equal(refused.body.success, false);
      assert.equal(refused.body.code, 'rate_limited');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal(refused.headers['ratelimit-remaining'], '0');
      assert.ok(refused.headers['x-request-id']);
      // Refused before anything is written, from any address.
      const write = await ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        body: { name: 'x', phone: '1' },
        remoteAddress: '192.0.2.99',
      });
      assert.equal(write.status, 429);
      const rows = await ctx.db.selectFrom('leads').select('id').where('tenantId', '=', tenant.id).execute();
      assert.equal(rows.length, 0);
      // The address's budget spent once, for the token's first request: another token is served from it.
      const another = await leads(other.token, '192.0.2.1');
      assert.equal(another.status, 200);
      assert.equal(another.headers['ratelimit-remaining'], String(LIMIT - 1), "the other token's own budget");
    });

    it('keeps one budget per token: another token is not affected', async () => {
      const res = await leads(other.token, '192.0.2.2');
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-remaining'], String(LIMIT - 2), 'its second request, from another address');
    });

    it('puts the headers on error answers too (403, 404)', async () => {
      const forbidden = await leads(null, '192.0.2.3');
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.headers['ratelimit-limit'], String(LIMIT));
      const missing = await ctx.request('GET', `${API}/leads/01900000-0000-7000-8000-000000000000`, {
        token: other.token,
        remoteAddress: '192.0.2.3',
      });
      assert.equal(missing.status, 404);
      assert.ok(missing.headers['ratelimit-remaining'] !== undefined);
    });

    it("answers a flood of made-up tokens 429 from its address's budget, before any database lookup", async () => {
      for (let i = 0; i < LIMIT; i++) assert.equal((await leads(madeUpToken(), '198.51.100.7')).status, 403);
      // With the tokens' table gone, a lookup could not answer 403: every 429 below came before one.
      await sql`alter table api_tokens rename to api_tokens_away`.execute(ctx.db);
      try {
        const answers = await Promise.all(Array.from({ length: 50 }, () => leads(madeUpToken(), '198.51.100.7')));
        assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([429]));
        assert.equal(answers[0]?.body.code, 'rate_limited');
      } finally {
        await sql`alter table api_tokens_away rename to api_tokens`.execute(ctx.db);
      }
    });

    it("never lets other clients' traffic evict or reset a real token's counter", async () => {
      const steady = await ctx.tenant('Steady');
      await leads(steady.token, '192.0.2.4');
      await leads(steady.token, '192.0.2.4');
      assert.equal((await leads(steady.token, '192.0.2.4')).headers['ratelimit-remaining'], String(LIMIT - 3));
      // More addresses than the rate limiter's own in-memory store holds (5,000, least recently used out).
      for (let i = 0; i < 5_100; i++) {
        const answer = await leads('not-a-token', `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
        assert.equal(answer.status, 403);
      }
      for (let i = 0; i < LIMIT + 2; i++) await leads(madeUpToken(), '192.0.2.4');
      assert.equal((await leads(steady.token, '192.0.2.4')).headers['ratelimit-remaining'], String(LIMIT - 4));
    });

    it('counts IPv6 clients by their /64, so that walking through its addresses buys no budget', async () => {
      for (let i = 1; i <= LIMIT; i++) {
        assert.equal((await leads(madeUpToken(), `2001:db8:1:2::${i.toString(16)}`)).status, 403);
      }
      assert.equal((await leads(madeUpToken(), '2001:db8:1:2:ffff::9')).status, 429);
      assert.equal((await leads(madeUpToken(), '2001:db8:1:3::1')).status, 403, 'another /64');
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

describe('X-Forwarded-For behind a proxy (SPEC §10)', () => {
  const ctx = new TestContext('pglite', { FUNIL_RATE_LIMIT: '2', FUNIL_TRUST_PROXY: '10.0.0.1' });
  before(() => ctx.start());
  after(() => ctx.stop());
  const via = (remoteAddress: string, forwardedFor: string) =>
    ctx.request('GET', `${API}/leads`, {
      token: madeUpToken(),
      remoteAddress,
      headers: { 'x-forwarded-for': forwardedFor },
    });

  it('counts by the forwarded address when the sender is a listed proxy', async () => {
    assert.equal((await via('10.0.0.1', '198.51.100.1')).status, 403);
    assert.equal((await via('10.0.0.1', '198.51.100.1')).status, 403);
    assert.equal((await via('10.0.0.1', '198.51.100.1')).status, 429);
    assert.equal((await via('10.0.0.1', '198.51.100.2')).status, 403, 'another client behind the proxy');
  });

  it('ignores the header from anyone else: a client cannot choose its own address', async () => {
    assert.equal((await via('203.0.113.5', '198.51.100.3')).status, 403);
    assert.equal((await via('203.0.113.5', '198.51.100.4')).status, 403);
    assert.equal((await via('203.0.113.5', '198.51.100.5')).status, 429);
  });
});

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
    // Each instance counts a token's first request against the address too, until it knows the
    // token; its answer shows the token's counters all the same.
    const answers: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const app = instances[i % 2] as FastifyInstance;
      const res = await app.inject({ method: 'GET', url: `${API}/leads`, headers, remoteAddress: '192.0.2.50' });
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
