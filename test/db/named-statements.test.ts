import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { nameStatement, prepareNamedStatements } from '../../src/db/named-statements.js';
import { createTestDatabase, skipUnless, type TestDatabase } from '../helpers/test-database.js';

describe('named statements read their rows (src/db/named-statements.ts) [postgres]', {
  skip: skipUnless('postgres'),
}, () => {
  let testDatabase: TestDatabase;
  const clients: pg.Client[] = [];

  before(async () => {
    testDatabase = await createTestDatabase('postgres');
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.end()));
    await testDatabase?.destroy();
  });

  /** A connection of its own, running registered texts as named statements, as the pool's do. */
  async function connection(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: testDatabase.url });
    await client.connect();
    clients.push(client);
    prepareNamedStatements(client as unknown as pg.PoolClient);
    return client;
  }

  it('parses every run alike, from what the first run read of the columns', async () => {
    const text = `select $1::int as count, $2::timestamptz as at, '{"a_b": [1]}'::jsonb as doc, null::text as absent, $3::text as word`;
    nameStatement(text);
    const client = await connection();
    const runs = [];
    for (const [count, word] of [
      [1, 'one'],
      [2, 'two'],
    ] as const) {
      runs.push(await client.query(text, [count, '2026-11-27T10:00:00.000Z', word]));
    }
    const [first, second] = runs as [pg.QueryResult, pg.QueryResult];
    for (const [result, count, word] of [
      [first, 1, 'one'],
      [second, 2, 'two'],
    ] as const) {
      assert.deepEqual(result.rows, [
        { count, at: new Date('2026-11-27T10:00:00.000Z'), doc: { a_b: [1] }, absent: null, word },
      ]);
      assert.deepEqual(
        result.fields.map((field) => field.name),
        ['count', 'at', 'doc', 'absent', 'word'],
      );
    }
    // The second run took the first's parsers instead of looking each one up again.
    const parsersOf = (result: pg.QueryResult) => (result as unknown as { _parsers: unknown[] })._parsers;
    assert.equal(parsersOf(second), parsersOf(first));
  });

  it('reads the columns anew when the same statement describes them otherwise (a connection after a change of schema)', async () => {
    const text = 'select v from named_rows';
    nameStatement(text);
    const before = await connection();
    await before.query('create table named_rows (v int)');
    await before.query('insert into named_rows values (42)');
    assert.deepEqual((await before.query(text, [])).rows, [{ v: 42 }]);

    await before.query('drop table named_rows');
    await before.query('create table named_rows (v text)');
    await before.query("insert into named_rows values ('forty-two')");
    const after = await connection();
    assert.deepEqual((await after.query(text, [])).rows, [{ v: 'forty-two' }]);
  });
});
