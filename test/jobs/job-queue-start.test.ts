import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { JobQueue } from '../../src/jobs/job-queue.js';
import { createTestDatabase, skipUnless } from '../helpers/test-database.js';

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
