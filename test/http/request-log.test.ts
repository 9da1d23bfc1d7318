import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pino from 'pino';
import { issueToken } from '../../src/admin/issue-token.js';
import { TenantRepository } from '../../src/admin/tenant.repository.js';
import { buildApp } from '../../src/app.js';
import { SCOPES } from '../../src/auth/scopes.js';
import { TokenRepository } from '../../src/auth/token.repository.js';
import { ADMIN_API, ADMIN_TOKEN, API, testConfig } from '../helpers/test-app.js';
import { BACKENDS, createTestDatabase, skipUnless, type TestDatabase } from '../helpers/test-database.js';

/** A value that must never reach the log: it travels only in request bodies. */
const MARKER = 'zq-body-marker-7f3a9c';

for (const backend of BACKENDS) {
  describe(`request log lines [${backend}]`, { skip: skipUnless(backend) }, () => {
    const lines: string[] = [];
    let app: FastifyInstance;
    let testDatabase: TestDatabase;
    let tenantId: string;
    let token: string;
    let readOnlyToken: string;

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      const db = testDatabase.database.db;
      tenantId = (await new TenantRepository(db).create('Logged')).id;
      const tokens = new TokenRepository(db);
      token = (await issueToken(tokens, { tenantId, name: 'all', scopes: SCOPES, expiresAt: null })).token;
      readOnlyToken = (await issueToken(tokens, { tenantId, name: 'ro', scopes: ['leads:read'], expiresAt: null }))
        .token;
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
      app = await buildApp({ config: testConfig({ LOG_LEVEL: 'info' }), database: testDatabase.database, logger });
      await app.ready();
    });

    after(async () => {
      await app?.close();
      await testDatabase?.destroy();
    });

    /** Sends one request and returns the answer with the log lines it produced. */
    async function logged(options: InjectOptions) {
      const from = lines.length;
      const res = await app.inject(options);
      // The line is written when the answer is finished, which may be just after inject resolves.
      for (let i = 0; i < 100 && lines.length === from; i++) await sleep(5);
      await sleep(20);
      const produced = lines.slice(from).map((line) => JSON.parse(line));
      return { res, produced };
    }

    const bearer = (value: string) => ({ authorization: `Bearer ${value}` });
    const json = { 'content-type': 'application/json' };

    it('writes exactly one JSON line per request, with request id, tenant, route, status, duration (SPEC §12)', async () => {
      const { res, produced } = await logged({ method: 'GET', url: `${API}/leads`, headers: bearer(token) });
      assert.equal(res.statusCode, 200);
      assert.equal(produced.length, 1, JSON.stringify(produced));
      const [line] = produced;
      assert.equal(line.requestId, res.headers['x-request-id']);
      assert.equal(line.tenant, tenantId);
      assert.equal(line.route, `${API}/leads`);
      assert.equal(line.method, 'GET');
      assert.equal(line.status, 200);
      assert.equal(typeof line.durationMs, 'number');
      assert.ok(line.durationMs >= 0);
      assert.equal(line.level, 30);
    });

    it('an MCP request names its method, tool and error code, never its arguments (SPEC §19, §17)', async () => {
      const call = (name: string, args: Record<string, unknown>) => ({
        method: 'POST' as const,
        url: `${API}/mcp`,
        headers: { ...bearer(token), ...json, accept: 'application/json, text/event-stream' },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });
      const refused = await logged(call('create_lead', { name: MARKER }));
      assert.equal(refused.res.statusCode, 200);
      assert.equal(refused.produced.length, 1);
      assert.deepEqual(refused.produced[0].mcp, {
        method: 'tools/call',
        tool: 'create_lead',
        code: 'validation_failed',
      });
      assert.equal(refused.produced[0].route, `${API}/mcp`);
      const found = await logged(call('search_leads', { q: `${MARKER}@example.com` }));
      assert.deepEqual(found.produced[0].mcp, { method: 'tools/call', tool: 'search_leads' });
      for (const line of [...refused.produced, ...found.produced]) assert.doesNotMatch(JSON.stringify(line), /zq-body/);
    });

    it('logs the echoed incoming request id and the route pattern, not the raw path (SPEC §1.4, §12)', async () => {
      const created = await app.inject({
        method: 'POST',
        url: `${API}/leads`,
        headers: { ...bearer(token), ...json },
        payload: JSON.stringify({ name: 'L', phone: '1' }),
      });
      const id = created.json()._id;
      const { res, produced } = await logged({
        method: 'GET',
        url: `${API}/leads/${id}`,
        headers: { ...bearer(token), 'x-request-id': 'trace-abc.123' },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-request-id'], 'trace-abc.123');
      assert.equal(produced.length, 1);
      assert.equal(produced[0].requestId, 'trace-abc.123');
      assert.equal(produced[0].route, `${API}/leads/:id`);
      assert.equal(produced[0].tenant, tenantId);
    });

    it('writes one line, too, for 400, 403, 404, 413 and 415 answers (SPEC §12)', async () => {
      const requests: Array<[InjectOptions, number]> = [
        [{ method: 'POST', url: `${API}/leads`, headers: { ...bearer(token), ...json }, payload: '{"name":' }, 400],
        [{ method: 'GET', url: `${API}/leads` }, 403],
        [{ method: 'POST', url: `${API}/leads`, headers: bearer(readOnlyToken), payload: {} }, 403],
        [{ method: 'GET', url: `${API}/leads/not-a-uuid`, headers: bearer(token) }, 404],
        [{ method: 'GET', url: '/nope' }, 404],
        [
          {
            method: 'POST',
            url: `${API}/leads`,
            headers: { ...bearer(token), ...json },
            payload: 'x'.repeat(1024 * 1024 + 1),
          },
          413,
        ],
        [
          {
            method: 'POST',
            url: `${API}/leads`,
            headers: { ...bearer(token), 'content-type': 'text/plain' },
            payload: 'x',
          },
          415,
        ],
      ];
      for (const [options, status] of requests) {
        const { res, produced } = await logged(options);
        assert.equal(res.statusCode, status, `${options.method} ${options.url}`);
        assert.equal(produced.length, 1, `${status}: ${JSON.stringify(produced)}`);
        assert.equal(produced[0].status, status);
        assert.equal(produced[0].requestId, res.headers['x-request-id']);
      }
    });

    it('never logs a token or a request body (SPEC §12)', async () => {
      const createdToken = await app.inject({
        method: 'POST',
        url: `${ADMIN_API}/tenants/${tenantId}/tokens`,
        headers: { ...bearer(ADMIN_TOKEN), ...json },
        payload: JSON.stringify({ name: MARKER, scopes: ['leads:read'] }),
      });
      assert.equal(createdToken.statusCode, 201);
      const secondToken: string = createdToken.json().token;
      const bodies: Array<[InjectOptions, number]> = [
        [
          {
            method: 'POST',
            url: `${API}/leads`,
            headers: { ...bearer(token), ...json },
            payload: JSON.stringify({ name: MARKER, email: `${MARKER}@example.com`, notes: MARKER }),
          },
          201,
        ],
        [
          {
            method: 'POST',
            url: `${API}/leads`,
            headers: { ...bearer(token), ...json },
            payload: JSON.stringify({ name: 'x', score: MARKER, [MARKER]: 1 }),
          },
          400,
        ],
        [
          {
            method: 'POST',
            url: `${API}/customers`,
            headers: { ...bearer(token), ...json },
            payload: `{"name": "${MARKER}", broken`,
          },
          400,
        ],
        [
          {
            method: 'POST',
            url: `${API}/customers`,
            headers: { ...bearer(token), ...json },
            payload: JSON.stringify({ name: MARKER, email: 'c@x.example' }),
          },
          201,
        ],
        [
          {
            method: 'POST',
            url: `${API}/leads`,
            headers: { ...bearer(secondToken), ...json },
            payload: JSON.stringify({ name: MARKER, phone: '1' }),
          },
          403,
        ],
        [{ method: 'GET', url: `${API}/leads`, headers: bearer(secondToken) }, 200],
        [{ method: 'GET', url: `${API}/leads`, headers: bearer(`${token}x`) }, 403],
        [
          {
            method: 'POST',
            url: `${ADMIN_API}/tenants`,
            headers: { ...bearer(ADMIN_TOKEN), ...json },
            payload: JSON.stringify({ name: MARKER }),
          },
          201,
        ],
      ];
      for (const [options, status] of bodies) {
        const { res, produced } = await logged(options);
        assert.equal(res.statusCode, status, `${options.method} ${options.url}: ${res.body}`);
        assert.equal(produced.length, 1);
      }
      const everything = lines.join('');
      for (const secret of [token, readOnlyToken, secondToken, ADMIN_TOKEN, MARKER]) {
        assert.ok(!everything.includes(secret), `the log contains ${secret.slice(0, 8)}…`);
      }
      // Not even a fragment of a token: its random part never appears.
      for (const secret of [token, secondToken]) assert.ok(!everything.includes(secret.slice(4, 20)));
    });

    it('never logs a query string: no searched text, e-mail or external id (SPEC §17)', async () => {
      const person = 'pessoa-qs-4b1d@example.com';
      const searched = 'busca-qs-9e2c';
      const external = 'ext-qs-77aa';
      const queries: Array<[string, number]> = [
        [`${API}/leads?q=${searched}&email=${person}&externalId=${external}`, 200],
        [`${API}/customers?q=${searched}&email=${encodeURIComponent(person)}&externalId=${external}`, 200],
        [`${API}/leads?limit=${searched}`, 400],
        [`${API}/leads?custom.${searched}=${external}`, 400],
        [`${API}/leads/not-a-uuid?email=${person}`, 404],
        [`${API}/personal-data?email=${person}`, 200],
        [`${API}/events?objectId=${searched}`, 400],
        [`/nope?email=${person}`, 404],
      ];
      const from = lines.length;
      for (const [url, status] of queries) {
        const { res, produced } = await logged({ method: 'GET', url, headers: bearer(token) });
        assert.equal(res.statusCode, status, `${url}: ${res.body}`);
        assert.equal(produced.length, 1);
        assert.ok(!String(produced[0].route).includes('?'), produced[0].route);
      }
      const erased = await logged({
        method: 'POST',
        url: `${API}/personal-data/erase`,
        headers: { ...bearer(token), ...json },
        payload: JSON.stringify({ email: person }),
      });
      assert.equal(erased.res.statusCode, 200);
      const written = lines.slice(from).join('');
      for (const value of [person, searched, external, 'pessoa-qs']) {
        assert.ok(!written.includes(value), `the log contains ${value}`);
      }
    });
  });
}
