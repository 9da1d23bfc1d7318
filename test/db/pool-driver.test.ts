import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { WaitBudget } from '../../src/db/connection-wait.js';
import type { Database } from '../../src/db/database.js';
import { BACKENDS, createTestDatabase, skipUnless, type TestDatabase } from '../helpers/test-database.js';

/** Kysely over Funil's own driver (db/pool-driver.ts) answers as over Kysely's PostgresDriver. */
for (const backend of BACKENDS) {
  describe(`Kysely on Funil's pool driver [${backend}]`, { skip: skipUnless(backend) }, () => {
    let test: TestDatabase;
    let database: Database;
    before(async () => {
      test = await createTestDatabase(backend);
      database = test.database;
      await sql`create table driver_probe (id int primary key, note text)`.execute(database.db);
    });
    after(() => test.destroy());

    it('counts the rows a write changed, and none for a read', async () => {
      const { db } = database;
      const inserted = await db
        .insertInto('driver_probe' as never)
        .values([{ id: 1 }, { id: 2 }] as never)
        .executeTakeFirst();
      assert.equal(inserted.numInsertedOrUpdatedRows, 2n);
      const updated = await db
        .updateTable('driver_probe' as never)
        .set({ note: 'x' } as never)
        .executeTakeFirst();
      assert.equal(updated.numUpdatedRows, 2n);
      const read = await sql`select id from driver_probe order by id`.execute(db);
      assert.deepEqual(read.rows, [{ id: 1 }, { id: 2 }]);
      assert.equal(read.numAffectedRows, undefined);
      const deleted = await db.deleteFrom('driver_probe' as never).executeTakeFirst();
      assert.equal(deleted.numDeletedRows, 2n);
    });

    it('begins a transaction in the isolation level and access mode asked for, and rolls it back on a throw', async () => {
      const handle = database.within(new WaitBudget(5_000));
      const seen = await handle
        .transaction()
        .setIsolationLevel('serializable')
        .setAccessMode('read only')
        .execute(async (trx) => {
          const { rows } = await sql<{ level: string; readOnly: string }>`
            select current_setting('transaction_isolation') as level,
                   current_setting('transaction_read_only') as "readOnly"`.execute(trx);
          return rows[0];
        });
      assert.deepEqual(seen, { level: 'serializable', readOnly: 'on' });
      await assert.rejects(
        handle
          .transaction()
          .setAccessMode('read only')
          .execute((trx) => sql`insert into driver_probe (id) values (9)`.execute(trx)),
        /read-only transaction/,
      );
      await assert.rejects(
        handle.transaction().execute(async (trx) => {
          await sql`insert into driver_probe (id) values (3)`.execute(trx);
          throw new Error('undone');
        }),
        /undone/,
      );
      const { rows } = await sql`select id from driver_probe where id = 3`.execute(database.db);
      assert.deepEqual(rows, []);
    });

    it("runs a request's transaction on one connection, and gives it back", async () => {
      const handle = database.within(new WaitBudget(5_000));
      const pids = await handle.transaction().execute(async (trx) => {
        const first = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        const second = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        return [first.rows[0]?.pid, second.rows[0]?.pid];
      });
      assert.equal(pids[0], pids[1]);
      const stats = database.stats();
      assert.equal(stats.total - stats.idle, 0, 'every connection is back in the pool');
    });
  });
}
