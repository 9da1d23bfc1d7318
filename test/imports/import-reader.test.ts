import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { delimiterOf, withinLimit } from '../../src/imports/import-reader.js';
import { ApiError } from '../../src/shared/errors.js';

describe('reading an upload (SPEC §23)', () => {
  it('refuses a file past its limit with a 413, as it arrives', async () => {
    async function* file() {
      for (let i = 0; i < 10; i++) yield Buffer.alloc(1_000, 0x61);
    }
    const read: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of withinLimit(file(), 5_500)) read.push(chunk.length);
      })(),
      (error: unknown) => error instanceof ApiError && error.statusCode === 413 && error.code === 'payload_too_large',
    );
    assert.equal(read.length, 5, 'nothing past the limit is passed on');
  });

  it('takes the separator the header has more of, outside quotes', () => {
    assert.equal(delimiterOf('name;email;phone'), ';');
    assert.equal(delimiterOf('name,email,phone'), ',');
    assert.equal(delimiterOf('"a,b,c";email'), ';');
    assert.equal(delimiterOf('name'), ',');
  });
});
