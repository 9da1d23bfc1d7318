import { setTimeout as sleep } from 'node:timers/promises';
import type { Answering } from './answering.js';
import type { TenantLines } from './tenant-lines.js';

/** How long background work waits before asking again for a place its tenant's line refused (full). */
const RETRY_MS = 50;
/** The longest it waits in line at once before asking again. */
const WAIT_MS = 30_000;
/** The longest it waits for a moment with no request being answered before it starts anyway. */
const QUIET_WAIT_MS = 25;

/**
 * Runs background work of a tenant (an import's step, SPEC §23) in a place of the tenant's line
 * (SPEC §10), as one of its requests: it waits its turn behind the tenant's requests and takes turns
 * with the other tenants, never more than the tenant's share. Unlike a request it is never refused:
 * it asks again until it is served. Its time is not measured as the tenant's service time, which
 * a chunk of 1,000 rows would make look slow enough to turn the tenant's own requests away.
 * And it goes after requests: it starts once none is being answered (or QUIET_WAIT_MS passed), so a
 * request meets at most the rest of one step, not a queue of them.
 */
export function turnsIn(lines: () => TenantLines | undefined, answering?: Answering) {
  return async <T>(tenant: string, work: () => Promise<T>): Promise<T> => {
    await answering?.quiet(QUIET_WAIT_MS);
    const line = lines();
    if (line === undefined) return work();
    for (;;) {
      const place = line.join(tenant);
      if (typeof place === 'string') {
        await sleep(RETRY_MS);
        continue;
      }
      try {
        await place.serve(WAIT_MS);
      } catch {
        place.leave(false);
        continue;
      }
      try {
        return await work();
      } finally {
        place.leave(false);
      }
    }
  };
}
