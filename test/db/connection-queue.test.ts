import assert from 'node:assert/strict';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { ConnectionQueue, ConnectionWaitTimeout } from '../../src/db/connection-queue.js';
import { WaitBudget } from '../../src/db/connection-wait.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { holdConnection, waitingReaches } from '../helpers/held-connection.js';
import { BACKENDS, type Backend, createTestDatabase, skipUnless, type TestDatabase } from '../helpers/test-database.js';

describe('ConnectionQueue: the turns of the parties waiting for a connection', () => {
  it('admits at once while a place is free, then gives each freed place to the next party in turn', async () => {
    const queue = new ConnectionQueue(2);
    await queue.enter('a', 1_000);
    await queue.enter('a', 1_000);
    const admitted: string[] = [];
    const waits = ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'].map((label) =>
      queue.enter(label.slice(0, 1), 1_000).then(() => admitted.push(label)),
    );
    assert.equal(queue.waiting, 6);
    for (let i = 0; i < 6; i++) queue.leave();
    await Promise.all(waits);
    assert.deepEqual(admitted, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    assert.equal(queue.waiting, 0);
  });

  it('predicts the wait of a new checkout from the turns ahead of it and the typical recent hold, unmoved by one stall', async () => {
    const queue = new ConnectionQueue(1);
    assert.equal(queue.expectedWaitMs('quiet'), 0, 'a place free, nobody waiting');
    await queue.enter('busy', 1_000);
    // Holds of 40 ms, and one stall of 2 s that the median does not take for the typical hold.
    for (const ms of [40, 40, 2_000, 40, 40]) {
      queue.leave(ms);
      await queue.enter('busy', 1_000);
    }
    const waits = [1, 2, 3].map(() => queue.enter('busy', 5_000).catch(() => {}));
    // A quiet party waits for its own turn and one of the busy party's: 2 holds.
    assert.equal(queue.expectedWaitMs('quiet'), 80);
    // The busy party's next query waits behind its own three: 4 holds.
    assert.equal(queue.expectedWaitMs('busy'), 160);
    for (let i = 0; i < 4; i++) queue.leave();
    await Promise.all(waits);
  });

  it('counts a hold past the longest wait (a stalled database, then woken) as that long, so an outage does not pass for load', async () => {
    const queue = new ConnectionQueue(1, 100);
    await queue.enter('a', 1_000);
    for (let i = 0; i < 5; i++) {
      queue.leave(6_000);
      await queue.enter('a', 1_000);
    }
    const waiting = queue.enter('b', 5_000).catch(() => {});
    assert.equal(queue.expectedWaitMs('c'), 200, 'two turns of at most 100 ms');
    queue.leave();
    await waiting;
  });

  it('takes a waiter that ran out of time out of its line, and the freed place goes to the next one', async () => {
    const queue = new ConnectionQueue(1);
    await queue.enter('a', 1_000);
    const late = queue.enter('b', 20);
    const patient = queue.enter('c', 5_000);
    await assert.rejects(late, ConnectionWaitTimeout);
    assert.equal(queue.waiting, 1);
    queue.leave();
    await patient;
    queue.leave();
    // Nobody waits and one place is free again: the next party is admitted at once, the one after waits.
    await queue.enter('d', 1_000);
    await assert.rejects(queue.enter('e', 10), ConnectionWaitTimeout);
  });
});

/** A database whose pool holds one connection, as the embedded one always does. */
async function oneConnection(backend: Backend, test: TestDatabase, connectTimeoutMs: number): Promise<Database> {
  if (backend === 'pglite') return test.database;
  return openDatabase({
    databaseUrl: test.url,
    dataDir: '',
    poolSize: 1,
    connectTimeoutMs,
    logger: pino({ level: 'silent' }),
  });
}

for (const backend of BACKENDS) {
  describe(`tenants take turns for the connections [${backend}] (SPEC §10, fair share)`, {
    skip: skipUnless(backend),
  }, () => {
    let test: TestDatabase;
    let database: Database;
    before(async () => {
      test = await createTestDatabase(backend);
      database = await oneConnection(backend, test, 300);
    });
    after(async () => {
      if (database !== test.database) await database.close();
      await test.destroy();
    });

    /** A query of a request of `tenant` with `budgetMs` to wait for its connection. */
    const query = async (tenant: string, budgetMs = 10_000) => {
      await sql`select 1`.execute(database.within(budgetOf(tenant, budgetMs)));
    };

    it("serves a quiet tenant's query after one of a flooder's, not after all of them", async () => {
      const release = await holdConnection(database);
      const done: string[] = [];
      const queries = ['flooder 1', 'flooder 2', 'flooder 3', 'quiet'].map((label) =>
        query(label.split(' ')[0] as string).then(() => done.push(label)),
      );
      await waitingReaches(database, 4);
      await release();
      await Promise.all(queries);
      // In the order asked (the pool's own queue), the quiet tenant would come last.
      assert.deepEqual(done, ['flooder 1', 'quiet', 'flooder 2', 'flooder 3']);
      assert.equal(database.stats().waiting, 0);
    });

    it("refuses a query whose request spent its wait in the line, leaving the others' turns as they were", async () => {
      const release = await holdConnection(database);
      const first = query('a');
      const late = query('b', 100);
      const last = query('c');
      await assert.rejects(late, ConnectionWaitTimeout);
      assert.equal(database.stats().waiting, 2);
      await release();
      await Promise.all([first, last]);
      assert.equal(database.stats().waiting, 0);
      await query('d', 1_000);
    });

    it('spends one budget over all the connections a request takes in turn', async () => {
      // Wide margins, for a loaded machine: the first wait is charged from when it begins, which can
      // be a while after the timer below is set; a fresh budget would make the second wait 1,000 ms.
      const budget = budgetOf('a', 1_000);
      const handle = database.within(budget);
      let release = await holdConnection(database);
      setTimeout(release, 600);
      await sql`select 1`.execute(handle);
      assert.ok(budget.leftMs <= 550, `${budget.leftMs} ms left after a wait of about 600`);
      release = await holdConnection(database);
      try {
        const started = performance.now();
        await assert.rejects(sql`select 1`.execute(handle), ConnectionWaitTimeout);
        assert.ok(performance.now() - started < 900, 'the second wait had only what the first left');
      } finally {
        await release();
      }
      assert.equal(database.stats().waiting, 0);
    });

    it("bounds the wait of work outside a request by the pool's connection timeout", async () => {
      const release = await holdConnection(database);
      try {
        const started = performance.now();
        await assert.rejects(sql`select 1`.execute(database.db), /timeout exceeded when trying to connect/);
        assert.ok(performance.now() - started < 5_000);
      } finally {
        await release();
      }
      await sql`select 1`.execute(database.db);
    });
  });
}

describe('a checkout takes an idle connection at once, and waits within its budget otherwise [postgres]', {
  skip: skipUnless('postgres'),
}, () => {
  let test: TestDatabase;
  let proxy: Server;
  const sockets = new Set<Socket>();
  before(async () => {
    test = await createTestDatabase('postgres');
    const target = new URL(test.url as string);
    // The first connection goes through to PostgreSQL; every later one is accepted and never answered,
    // as by a server that stopped answering.
    let accepted = 0;
    proxy = createServer((socket) => {
      sockets.add(socket);
      if (accepted++ > 0) return;
      const upstream = connect(Number(target.port || 5432), target.hostname);
      sockets.add(upstream);
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    await test.destroy();
  });

  it('a checkout that needs a new connection while the idle one is being taken waits its own budget, not the pool timeout', async () => {
    const url = new URL(test.url as string);
    url.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const database = await openDatabase({
      databaseUrl: url.toString(),
      dataDir: '',
      poolSize: 2,
      connectTimeoutMs: 5_000,
      logger: pino({ level: 'silent' }),
    });
    try {
      await sql`select 1`.execute(database.db);
      assert.equal(database.stats().idle, 1);
      // Asked in the same tick: the first takes the idle connection, the second must open one.
      const first = sql`select pg_sleep(0.2)`.execute(database.within(new WaitBudget(10_000)));
      const started = performance.now();
      const second = sql`select 1`.execute(database.within(new WaitBudget(150)));
      await assert.rejects(second, ConnectionWaitTimeout);
      assert.ok(performance.now() - started < 2_000, `refused after ${performance.now() - started} ms`);
      await first;
    } finally {
      await database.close();
    }
  });
});

function budgetOf(party: string, ms: number): WaitBudget {
  const budget = new WaitBudget(ms);
  budget.party = party;
  return budget;
}
