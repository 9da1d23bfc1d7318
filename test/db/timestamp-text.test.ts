import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isoFromTimestampText } from '../../src/db/timestamp-text.js';

describe("PostgreSQL's timestamp text as the API writes it (Date#toISOString to the letter)", () => {
  it('pads the milliseconds PostgreSQL leaves out or trims', () => {
    assert.equal(isoFromTimestampText('2026-11-21 17:05:40.545+00'), '2026-11-21T17:05:40.545Z');
    assert.equal(isoFromTimestampText('2026-11-21 17:05:40.5+00'), '2026-11-21T17:05:40.500Z');
    assert.equal(isoFromTimestampText('2026-11-21 17:05:40.05+00'), '2026-11-21T17:05:40.050Z');
    assert.equal(isoFromTimestampText('2026-11-21 17:05:40+00'), '2026-11-21T17:05:40.000Z');
    assert.equal(isoFromTimestampText('0999-01-02 03:04:05.006+00'), '0999-01-02T03:04:05.006Z');
  });

  it("reads the JSON form of the same text (an event's row, to_jsonb)", () => {
    assert.equal(isoFromTimestampText('2026-11-21T17:05:40.5+00:00'), '2026-11-21T17:05:40.500Z');
    assert.equal(isoFromTimestampText('2026-11-21T17:05:40+00:00'), '2026-11-21T17:05:40.000Z');
  });

  it('converts a session in another time zone, and finer precision, the slow way', () => {
    assert.equal(isoFromTimestampText('2026-11-21 14:05:40.545-03'), '2026-11-21T17:05:40.545Z');
    assert.equal(isoFromTimestampText('2026-11-21 22:35:40.545+05:30'), '2026-11-21T17:05:40.545Z');
    assert.equal(isoFromTimestampText('2026-11-21 17:05:40.545678+00'), '2026-11-21T17:05:40.545Z');
    assert.equal(isoFromTimestampText('2026-11-21 17:05:40.545+00:30'), '2026-11-21T16:35:40.545Z');
    assert.equal(
      isoFromTimestampText('12026-11-21 17:05:40+00'),
      new Date(Date.UTC(12026, 10, 21, 17, 5, 40)).toISOString(),
    );
    assert.equal(isoFromTimestampText('2026-11-21 17:05:40 BC'), '-002025-11-21T17:05:40.000Z');
  });

  it('keeps null as null', () => {
    assert.equal(isoFromTimestampText(null), null);
  });
});
