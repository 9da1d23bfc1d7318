import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pino from 'pino';
import { issueToken } from '../../src/admin/issue-token.js';
import { buildApp } from '../../src/app.js';
import { SCOPES } from '../../src/auth/scopes.js';
import { TokenRepository } from '../../src/auth/token.repository.js';
import { prepareDatabase } from '../../src/bootstrap.js';
import { migrateTo } from '../../src/db/migrate.js';
import { API, testConfig } from '../helpers/test-app.js';
import { BACKENDS, createTestDatabase, skipUnless, type TestDatabase } from '../helpers/test-database.js';

/** The last migration before pipelines. */
const BEFORE_PIPELINES = '2026-11-27T1300-lead-customer-index';
const STATUSES = ['open', 'in_progress', 'closed-won', 'won', 'lost'];
/** A status the deployment's list allowed once, and no longer does: some leads still hold it. */
const FORMER = 'archived';

for (const backend of BACKENDS) {
  describe(`the migration to pipelines, from the schema before it [${backend}]`, { skip: skipUnless(backend) }, () => {
    let testDatabase: TestDatabase;
    let app: FastifyInstance;
    const tenants: { id: string; token: string }[] = [];
    const before_: Record<string, Record<string, unknown>> = {};

    before(async () => {
      testDatabase = await createTestDatabase(backend);
      const { db } = testDatabase.database;
      // Back to the schema before pipelines, as a deployment upgrading would have it.
      await migrateTo(db, BEFORE_PIPELINES);
      for (const name of ['A', 'B']) {
        // As the schema of the time has it (TenantRepository reads columns added since).
        const tenant = { id: randomUUID() };
        await sql`insert into tenants (id, name) values (${tenant.id}, ${name})`.execute(db);
        // A token of the scopes of the time (before pipelines:write existed).
        const issued = await issueToken(new TokenRepository(db), {
          tenantId: tenant.id,
          name: 'old',
          scopes: SCOPES.filter((scope) => scope !== 'pipelines:write'),
          expiresAt: null,
        });
        tenants.push({ id: tenant.id, token: issued.token });
        for (const status of [...STATUSES, FORMER]) {
          await sql`
            insert into leads (id, tenant_id, name, phone, status, created_by, created_at, updated_at)
            values (gen_random_uuid(), ${tenant.id}, ${`Lead ${status}`}, '1', ${status}, ${issued.id}, now(), now())`.execute(
            db,
          );
        }
      }
      await prepareDatabase(db, { bootstrap: false, leadStatuses: STATUSES });
      app = await buildApp({
        config: testConfig({ FUNIL_LEAD_STATUSES: STATUSES.join(',') }),
        database: testDatabase.database,
        logger: pino({ level: 'silent' }),
      });
      await app.ready();
    });

    after(async () => {
      await app?.close();
      await testDatabase?.destroy();
    });

    const get = async (token: string, path: string) => {
      const res = await app.inject({
        method: 'GET',
        url: `${API}${path}`,
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };

    it('gives every tenant its first pipeline, the default, from FUNIL_LEAD_STATUSES', async () => {
      for (const tenant of tenants) {
        const [only, ...more] = await get(tenant.token, '/pipelines');
        assert.equal(more.length, 0);
        assert.equal(only.id, tenant.id);
        assert.equal(only.default, true);
        assert.deepEqual(
          only.stages.map((stage: { key: string; kind: string }) => [stage.key, stage.kind]),
          [
            ['open', 'open'],
            ['in_progress', 'open'],
            ['closed-won', 'open'],
            ['won', 'won'],
            ['lost', 'lost'],
          ],
        );
      }
    });

    it('leaves every lead where it was: same status, in its tenant’s first pipeline, no new version', async () => {
      for (const tenant of tenants) {
        const leads = await get(tenant.token, '/leads?limit=1000');
        assert.equal(leads.length, STATUSES.length + 1);
        for (const item of leads) {
          const full = await get(tenant.token, `/leads/${item._id}`);
          before_[item._id] = full;
          assert.equal(full.pipeline, tenant.id);
          assert.equal(full.name, `Lead ${full.status}`);
        }
        const events = await get(tenant.token, '/events?limit=1000');
        assert.deepEqual(events, [], 'the migration wrote no change');
      }
    });

    it('takes a kept key that no longer matches the new pattern, and keeps a former status readable and changeable', async () => {
      const [tenant] = tenants as [{ id: string; token: string }];
      const leads = await get(tenant.token, `/leads?limit=1000&status=closed-won`);
      assert.equal(leads.length, 1);
      const former = (await get(tenant.token, '/leads?limit=1000')).find(
        (lead: { status: string }) => lead.status === FORMER,
      );
      const update = await app.inject({
        method: 'PUT',
        url: `${API}/leads/${former._id}`,
        headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
        payload: { score: 10 },
      });
      assert.equal(update.statusCode, 200, update.body);
      assert.equal(update.json().status, FORMER);
      const summary = await get(tenant.token, '/leads/summary');
      assert.deepEqual(summary.byStatus.at(-1), { status: FORMER, kind: null, count: 1 });
    });
  });
}
