import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { printedToken, type ServerProcess, startServer } from '../helpers/server-process.js';
import { postgresTestUrl, withDatabase } from '../helpers/test-database.js';

const ADMIN_TOKEN = 'instances-admin-token-0123456789abcdefghij';
const url = postgresTestUrl();
if (!url && process.env.CI) throw new Error('CI must run the PostgreSQL suites: set FUNIL_TEST_DATABASE_URL');

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('several instances on one PostgreSQL (SPEC §5.4, §11)', {
  skip: url ? false : 'FUNIL_TEST_DATABASE_URL is not set',
}, () => {
  const name = `funil_instances_${randomBytes(4).toString('hex')}`;
  let servers: ServerProcess[] = [];
  let databaseUrl: string;

  before(async () => {
    await admin(`create database ${name}`);
    databaseUrl = withDatabase(url as string, name);
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop(5_000)));
    await admin(`drop database if exists ${name} with (force)`);
  });

  it('two instances started at once on an empty database both come up, migrate and bootstrap once', async () => {
    // At info level each start says whether it ran migrations.
    const env = { DATABASE_URL: databaseUrl, FUNIL_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'info' };
    servers = await Promise.all([startServer(env), startServer(env)]);
    const tokens = servers.map((server) => printedToken(server.output())).filter(Boolean);
    assert.equal(tokens.length, 1, 'exactly one instance prints the demo token');
    const migrators = servers.filter((server) => server.output().includes('"msg":"database migrated"'));
    assert.equal(migrators.length, 1, 'exactly one instance ran the migrations; the other found them done');

    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const tenants = await client.query('select name from tenants');
      assert.deepEqual(
        tenants.rows.map((row) => row.name),
        ['Demo'],
      );
      const migrations = await client.query('select name from kysely_migration order by name');
      const files = (await readdir(new URL('../../src/db/migrations/', import.meta.url)))
        .filter((file) => file.endsWith('.ts'))
        .map((file) => file.replace(/\.ts$/, ''))
        .sort();
      assert.deepEqual(
        migrations.rows.map((row) => row.name),
        files,
        'every migration applied, each once',
      );
    } finally {
      await client.end();
    }
  });

  it('both instances serve the same data, and a token revoked on one is refused by the other within 5 s', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const auth = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    const adminAuth = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

    const tenant = (await (
      await fetch(`${a.url}/api/admin/v1/tenants`, { method: 'POST', headers: adminAuth, body: '{"name":"Shared"}' })
    ).json()) as { id: string };
    const issued = (await (
      await fetch(`${a.url}/api/admin/v1/tenants/${tenant.id}/tokens`, {
        method: 'POST',
        headers: adminAuth,
        body: JSON.stringify({ name: 'sync', scopes: ['leads:read', 'leads:write'] }),
      })
    ).json()) as { id: string; token: string };

    const created = await fetch(`${a.url}/api/external/v1/leads`, {
      method: 'POST',
      headers: auth(issued.token),
      body: JSON.stringify({ name: 'Shared lead', phone: '1' }),
    });
    assert.equal(created.status, 201);
    const { _id } = (await created.json()) as { _id: string };
    const readOnB = await fetch(`${b.url}/api/external/v1/leads/${_id}`, { headers: auth(issued.token) });
    assert.equal(readOnB.status, 200);

    const revoked = await fetch(`${a.url}/api/admin/v1/tokens/${issued.id}`, { method: 'DELETE', headers: adminAuth });
    assert.equal(revoked.status, 200);
    const onA = await fetch(`${a.url}/api/external/v1/leads`, { headers: auth(issued.token) });
    assert.equal(onA.status, 403, 'refused at once by the instance that revoked it');

    const revokedAt = Date.now();
    let statusOnB = 200;
    while (Date.now() - revokedAt < 5_000) {
      statusOnB = (await fetch(`${b.url}/api/external/v1/leads`, { headers: auth(issued.token) })).status;
      if (statusOnB === 403) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(statusOnB, 403, 'refused by the other instance within 5 s');
  });
});
