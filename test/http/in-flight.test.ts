import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InFlight } from '../../src/http/in-flight.js';

interface Item {
  readonly name: string;
  slot: number;
}

const item = (name: string): Item => ({ name, slot: -1 });
const names = (inFlight: InFlight<Item>) => {
  const seen: string[] = [];
  inFlight.forEach((one) => {
    seen.push(one.name);
  });
  return seen.sort();
};

describe('the requests in flight, as the request deadline keeps them', () => {
  it('keeps exactly what was added and not removed, whatever the order of removals', () => {
    const inFlight = new InFlight<Item>();
    const items = ['a', 'b', 'c', 'd', 'e', 'f'].map(item);
    for (const one of items) inFlight.add(one);
    for (const index of [1, 0, 4]) inFlight.remove(items[index] as Item);
    assert.deepEqual(names(inFlight), ['c', 'd', 'f']);
    assert.equal(inFlight.size, 3);
    for (const one of items) assert.equal(one.slot < 0, ['a', 'b', 'e'].includes(one.name), one.name);
    // Moved into freed slots, each still removes itself, and only itself.
    inFlight.remove(items[5] as Item);
    inFlight.add(item('g'));
    assert.deepEqual(names(inFlight), ['c', 'd', 'g']);
  });

  it('ignores a second removal, and one of something never added', () => {
    const inFlight = new InFlight<Item>();
    const [a, b, c] = ['a', 'b', 'c'].map(item) as [Item, Item, Item];
    inFlight.add(a);
    inFlight.add(b);
    inFlight.remove(a);
    inFlight.remove(a);
    inFlight.remove(c);
    inFlight.remove({ name: 'stale', slot: 0 });
    assert.deepEqual(names(inFlight), ['b']);
  });

  it('visits each item once while the visit removes some of them', () => {
    for (let size = 0; size <= 12; size++) {
      const inFlight = new InFlight<Item>();
      const items = Array.from({ length: size }, (_, i) => item(String(i)));
      for (const one of items) inFlight.add(one);
      const visited: string[] = [];
      inFlight.forEach((one) => {
        visited.push(one.name);
        if (Number(one.name) % 3 !== 1) inFlight.remove(one);
      });
      assert.deepEqual(visited.sort(), items.map((one) => one.name).sort(), `${size} items`);
      assert.deepEqual(
        names(inFlight),
        items
          .filter((one) => Number(one.name) % 3 === 1)
          .map((one) => one.name)
          .sort(),
      );
    }
  });
});
