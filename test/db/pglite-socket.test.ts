import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type pg from 'pg';
import pino from 'pino';
import { type Database, openDatabase } from '../../src/db/database.js';
import { migratedDataDir } from '../helpers/test-database.js';

// The embedded database is reached through db/pglite-socket.ts: node-postgres reads PGlite's raw
// answers as it reads a server's. These are the answers a parser gets wrong first.
describe('node-postgres on the embedded database, through its socket', () => {
  let dataDir: string;
  let database: Database;
  const raw = () => database.db.withoutPlugins();

  before(async () => {
    dataDir = await migratedDataDir('funil-socket-');
    database = await openDatabase({ dataDir, poolSize: 1, logger: pino({ level: 'silent' }) });
  });
  after(async () => {
    await database.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('reads a large answer whole: 20,000 rows of multi-byte text, over many chunks of PGlite output', async () => {
    const { rows } = await sql<{ n: number; text: string }>`
      select n, repeat('ação 🚀 ', n % 50) || n as text from generate_series(1, 20000) as n`.execute(raw());
    assert.equal(rows.length, 20_000);
    for (const { n, text } of rows) assert.equal(text, `${'ação 🚀 '.repeat(n % 50)}${n}`);
  });

  it('gives a database error every field PostgreSQL sends, and the connection goes on', async () => {
    await sql`create table socket_keys (id int constraint socket_keys_key primary key)`.execute(raw());
    await sql`insert into socket_keys values (1)`.execute(raw());
    const refused = await sql`insert into socket_keys values (1)`.execute(raw()).then(
      () => assert.fail('the duplicate was stored'),
      (error: pg.DatabaseError) => error,
    );
    assert.equal(refused.code, '23505');
    assert.equal(refused.constraint, 'socket_keys_key');
    assert.equal(refused.table, 'socket_keys');
    assert.match(refused.detail ?? '', /\(id\)=\(1\)/);
    const { rows } = await sql<{ count: string }>`select count(*) from socket_keys`.execute(raw());
    assert.equal(rows[0]?.count, '1');
  });

  it('rolls back a failed transaction and serves the next one', async () => {
    await sql`create table socket_log (line text not null)`.execute(raw());
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await sql`insert into socket_log values ('kept only if committed')`.execute(trx);
        await sql`insert into socket_log values (null)`.execute(trx);
      }),
      /null value/,
    );
    await database.db.transaction().execute((trx) => sql`insert into socket_log values ('second')`.execute(trx));
    const { rows } = await sql<{ line: string }>`select line from socket_log`.execute(raw());
    assert.deepEqual(rows, [{ line: 'second' }]);
  });

  it('passes a notice by and answers what follows', async () => {
    await sql`do $$ begin raise notice 'a notice between answers'; end $$`.execute(raw());
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(raw());
    assert.deepEqual(rows, [{ one: 1 }]);
  });

  it('opens whatever PGSSLMODE and PGOPTIONS say, which are for a PostgreSQL server, not for it', async () => {
    const saved = { PGSSLMODE: process.env.PGSSLMODE, PGOPTIONS: process.env.PGOPTIONS };
    Object.assign(process.env, { PGSSLMODE: 'require', PGOPTIONS: '-c search_path=elsewhere' });
    const dir = await migratedDataDir('funil-socket-env-');
    try {
      const other = await openDatabase({ dataDir: dir, poolSize: 1, logger: pino({ level: 'silent' }) });
      try {
        const { rows } = await sql<{ search_path: string }>`show search_path`.execute(other.db.withoutPlugins());
        assert.equal(rows[0]?.search_path, 'public');
      } finally {
        await other.close();
      }
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('answers many queries asked at once, each with its own rows, in order', async () => {
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => sql<{ i: number }>`select ${i}::int as i`.execute(raw())),
    );
    assert.deepEqual(
      answers.map(({ rows }) => rows[0]?.i),
      Array.from({ length: 200 }, (_, i) => i),
    );
  });
});
