import { sql } from 'kysely';
import type { ScratchDatabase } from './bench-database.js';

/** How often the steady writer writes. */
export const WRITE_EVERY_MS = 5;

/**
 * Writes one lead every WRITE_EVERY_MS on `db` (its own connection) until stopped: the longest a
 * write waited, and how many it made, while something else ran (a migration, a move, a backfill).
 */
export function steadyWriter(db: ScratchDatabase['bulk'], ids: () => string) {
  let stopped = false;
  let longest = 0;
  let writes = 0;
  const done = (async () => {
    while (!stopped) {
      const started = performance.now();
      await sql`update leads set score = (score + 1) % 101 where id = ${ids()}::uuid`.execute(db);
      longest = Math.max(longest, performance.now() - started);
      writes++;
      await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { longest, writes };
    },
  };
}
