import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { JobQueue } from '../../src/jobs/job-queue.js';
import { BACKENDS, createTestDatabase, skipUnless } from '../helpers/test-database.js';

const QUEUES = ['funil-first', 'funil-second', 'funil-third'];

// CI met it: two instances' job queues opening at once on a new database, each creating the queues,
// and PostgreSQL ending one of them in a deadlock (test/imports/imports.test.ts, Node 24).
describe('the job queues of instances starting at once on a new database [postgres]', {
  skip: skipUnless('postgres'),
}, () => {
  it('all open, and each queue is made once', async () => {
    for (let round = 0; round < 3; round++) {
      const test = await createTestDatabase('postgres');
      const instances = Array.from(
        { length: 4 },
        () => new JobQueue(test.database, test.url, false, pino({ level: 'silent' }), QUEUES),
      );
      try {
        const opened = await Promise.allSettled(instances.map((queue) => queue.ready()));
        assert.deepEqual(
          opened.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'open')),
          instances.map(() => 'open'),
          `round ${round}`,
        );
        const { rows } = await sql<{ name: string }>`select name from pgboss.queue order by name`.execute(
          test.database.db,
        );
        assert.deepEqual(
          rows.map((row) => row.name),
          [...QUEUES].sort(),
        );
      } finally {
        await Promise.all(instances.map((queue) => queue.stop()));
        await test.destroy();
      }
    }
  });
});

const ORPHANS = 'funil-orphans';

for (const backend of BACKENDS) {
  describe(`a job left active by an instance that ended [${backend}]`, { skip: skipUnless(backend) }, () => {
    it(
      backend === 'pglite'
        ? 'is offered again as the queue opens: the embedded database has no other process that could be working it'
        : 'stays with it until it expires: another instance may be working it',
      async () => {
        const test = await createTestDatabase(backend);
        const logger = pino({ level: 'silent' });
        const first = new JobQueue(test.database, test.url, false, logger, [ORPHANS]);
        let started: () => void = () => {};
        let finish: () => void = () => {};
        const fetched = new Promise<void>((resolve) => (started = resolve));
        const held = new Promise<void>((resolve) => (finish = resolve));
        const worker = first.worker(ORPHANS, 1, async () => {
          started();
          await held;
        });
        let second: JobQueue | undefined;
        try {
          await first.ready();
          const job = { data: { n: 1 }, expireInSeconds: 600, retryLimit: 5, retryDelay: 2 };
          await first.insert(test.database.db, ORPHANS, [job, job]);
          worker.start();
          await fetched;
          const states = async () =>
            (
              await sql<{ state: string }>`select state from pgboss.job where name = ${ORPHANS} order by state`.execute(
                test.database.db,
              )
            ).rows.map((row) => row.state);
          // One fetched (active), one waiting its turn behind it (the worker takes one at a time).
          assert.deepEqual(await states(), ['created', 'active']);

          // The process that fetched it is gone, as far as the next one to open the queue can know.
          second = new JobQueue(test.database, test.url, false, logger, [ORPHANS]);
          await second.ready();
          assert.deepEqual(await states(), backend === 'pglite' ? ['created', 'retry'] : ['created', 'active']);
        } finally {
          finish();
          await first.stop();
          await second?.stop();
          await test.destroy();
        }
      },
    );
  });
}
