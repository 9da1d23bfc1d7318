import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileRowMapper } from '../../src/shared/row-mapper.js';

describe('a row mapper: an object of fixed keys built from a row', () => {
  it('reads each key from its row key, converted when a converter is given, in order', () => {
    const map = compileRowMapper([
      { key: '_id', rowKey: 'id' },
      { key: 'value', rowKey: 'value', convert: Number },
      { key: 'with "quotes"', rowKey: "it's" },
    ]);
    const object = map({ id: 'a1', value: '12.50', "it's": 3, ignored: 'x' }) as Record<string, unknown>;
    assert.deepEqual(object, { _id: 'a1', value: 12.5, 'with "quotes"': 3 });
    assert.deepEqual(Object.keys(object), ['_id', 'value', 'with "quotes"']);
    assert.equal(Object.getPrototypeOf(object), Object.prototype);
  });

  it('keeps a key the row lacks, as undefined, and refuses __proto__', () => {
    const object = compileRowMapper([{ key: 'missing', rowKey: 'nowhere' }])({}) as Record<string, unknown>;
    assert.ok('missing' in object);
    assert.equal(object.missing, undefined);
    assert.throws(() => compileRowMapper([{ key: '__proto__', rowKey: 'x' }]), /__proto__/);
  });
});
