import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Random bytes for 256 ids at a time: the `uuid` package asks the system for 16 at every id, which
 * was 5 % of a create's CPU and 18 % of a 100-lead batch's (npm run bench, W1's and W6's profiles).
 */
const pool = new Uint8Array(16 * 256);
const poolView = new DataView(pool.buffer);
let used = pool.length;
/**
 * `uuid`'s own ordering, kept here because it does not apply when the random bytes are handed to
 * it: within a millisecond, ids count up from a random start, so that ids made in one order sort
 * in that order (a batch's items list in input order).
 */
let msecs = Number.NEGATIVE_INFINITY;
let seq = 0;

/** Time-ordered UUIDv7 (SPEC §1.5): new rows land at the right edge of the B-tree. */
export function newId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const random = pool.subarray(used, used + 16);
  const now = Date.now();
  if (now > msecs) {
    msecs = now;
    seq = poolView.getUint32(used + 6) & 0x7fffffff;
  } else {
    seq = (seq + 1) | 0;
    if (seq === 0) msecs++;
  }
  used += 16;
  return v7({ random, msecs, seq });
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
