import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/shared/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('ids made in one order sort in that order, within a millisecond and across the random pool refills', () => {
  const ids = Array.from({ length: 5_000 }, () => newId());
  for (const id of ids) assert.match(id, V7);
  assert.deepEqual(ids, [...ids].sort());
  assert.equal(new Set(ids).size, ids.length);
  // The random tails differ (the pool is refilled, not reused): 5,000 ids span some 20 refills.
  assert.equal(new Set(ids.map((id) => id.slice(-12))).size, ids.length);
});

test("an id's first 48 bits are the time it was made, in milliseconds", () => {
  const before = Date.now();
  const id = newId();
  const after = Date.now();
  const msecs = Number.parseInt(id.replace('-', '').slice(0, 12), 16);
  assert.ok(msecs >= before && msecs <= after + 1, `${msecs} in [${before}, ${after}]`);
});
