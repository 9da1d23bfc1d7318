import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { adminAuth, PROCESS_ADMIN_TOKEN, tenantWithToken } from '../helpers/admin-api.js';
import { printedToken, type ServerProcess, startServer } from '../helpers/server-process.js';
import { postgresTestUrl, skipUnless, withDatabase } from '../helpers/test-database.js';

const ADMIN_TOKEN = PROCESS_ADMIN_TOKEN;
const url = postgresTestUrl();

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
  skip: skipUnless('postgres'),
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
    // Races below send 20 requests of one tenant at once: no fair-share cap in their way.
    const env = {
      DATABASE_URL: databaseUrl,
      FUNIL_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'info',
    };
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
    const issued = await tenantWithToken(a, 'Shared', ['leads:read', 'leads:write']);

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

  it('upserts and conversions sent to both instances at once make one record each (SPEC §13)', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const { token } = await tenantWithToken(a, 'Racers', [
      'leads:read',
      'leads:write',
      'customers:read',
      'customers:write',
    ]);
    const post = (server: ServerProcess, path: string, body: unknown) =>
      fetch(`${server.url}/api/external/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
    const race = (path: string, body: (i: number) => unknown) =>
      Promise.all(Array.from({ length: 20 }, (_, i) => post(i % 2 ? b : a, path, body(i))));
    const distinct = (answers: { body: Record<string, unknown> }[], key: (body: Record<string, unknown>) => unknown) =>
      new Set(answers.map((answer) => key(answer.body))).size;
    const statuses = (answers: { status: number }[]) => answers.map((answer) => answer.status).sort((x, y) => x - y);
    const once = [...Array(19).fill(200), 201];

    const leads = await race('/leads?upsert=email', (i) => ({ name: `Racer ${i}`, email: 'race@example.com' }));
    assert.deepEqual(statuses(leads), once);
    assert.equal(
      distinct(leads, (body) => body._id),
      1,
    );

    const customers = await race('/customers?upsert=externalId', (i) => ({
      name: `Racer ${i}`,
      email: `racer-${i}@example.com`,
      externalId: 'erp-1',
    }));
    assert.deepEqual(statuses(customers), once);
    assert.equal(
      distinct(customers, (body) => body._id),
      1,
    );

    const leadId = leads[0]?.body._id as string;
    const conversions = await race(`/leads/${leadId}/convert`, () => ({}));
    assert.deepEqual(statuses(conversions), once);
    assert.equal(
      distinct(conversions, (body) => (body.customer as { _id: string })._id),
      1,
    );

    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const counts = await client.query(
        `select (select count(*) from leads where email = 'race@example.com')::int as leads,
                (select count(*) from customers where external_id = 'erp-1')::int as by_external_id,
                (select count(*) from customers where email = 'race@example.com')::int as converted`,
      );
      assert.deepEqual(counts.rows[0], { leads: 1, by_external_id: 1, converted: 1 });
    } finally {
      await client.end();
    }
  });

  it('writes on both instances reach one reader of the feed exactly once, in order (SPEC §14)', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const { token } = await tenantWithToken(a, 'Feed', ['leads:read', 'leads:write']);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const writes = 40;
    const writer = async (server: ServerProcess, name: string) => {
      for (let i = 0; i < writes; i++) {
        const res = await fetch(`${server.url}/api/external/v1/leads`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: `${name} ${i}`, phone: String(i) }),
        });
        assert.equal(res.status, 201);
        const { _id } = (await res.json()) as { _id: string };
        const moved = await fetch(`${server.url}/api/external/v1/leads/${_id}/status`, {
          method: 'PUT',
          headers,
          body: '{"status":"contacted"}',
        });
        assert.equal(moved.status, 200);
      }
    };
    const expected = 2 * writes * 2;
    const seen: string[] = [];
    let after: string | undefined;
    let writing = true;
    const reader = (async () => {
      let deadline = Number.POSITIVE_INFINITY;
      while (seen.length < expected && Date.now() < deadline) {
        if (!writing && deadline === Number.POSITIVE_INFINITY) deadline = Date.now() + 10_000;
        const query = new URLSearchParams({ limit: '25', ...(after ? { after } : {}) });
        const res = await fetch(`${b.url}/api/external/v1/events?${query}`, { headers });
        assert.equal(res.status, 200);
        const page = (await res.json()) as { id: string }[];
        seen.push(...page.map((event) => event.id));
        after = page.at(-1)?.id ?? after;
        if (!res.headers.get('x-next-cursor')) await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await Promise.all([writer(a, 'On A'), writer(b, 'On B')]);
    writing = false;
    await reader;
    assert.equal(new Set(seen).size, seen.length, 'no event seen twice');
    assert.equal(seen.length, expected, 'every event seen');
    assert.deepEqual(seen, [...seen].sort(), 'in feed order');
  });
});
