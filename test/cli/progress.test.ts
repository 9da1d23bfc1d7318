import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { progressOn } from '../../src/cli/progress.js';

/** A stream that records what is written to it, a terminal or not. */
function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  const stream = { isTTY, columns: 100, write: (text: string) => writes.push(text) > 0 };
  return { stream: stream as unknown as NodeJS.WriteStream, writes };
}

describe("funil import's progress", () => {
  it('on a terminal: one bar redrawn in place with \\r, cleared to the end of the line, a newline at the end', () => {
    const { stream, writes } = fakeStream(true);
    const progress = progressOn(stream);
    progress.show({ label: 'running', done: 250, total: 1000, unit: 'rows', rate: 1234.4 });
    progress.show({ label: 'succeeded', done: 1000, total: 1000, unit: 'rows', rate: undefined });
    progress.end();
    assert.deepEqual(writes, [
      `\rrunning   [${'#'.repeat(8)}${'-'.repeat(22)}]  250 of 1,000 rows  25%  1,234 rows/s\u001b[K`,
      `\rsucceeded [${'#'.repeat(30)}]  1,000 of 1,000 rows  100%\u001b[K`,
      '\n',
    ]);
  });

  it('off a terminal: a plain line when the step changes, none for the same step within 5 s; nothing when quiet', () => {
    const { stream, writes } = fakeStream(false);
    const progress = progressOn(stream);
    progress.show({ label: 'uploading', done: 2_500_000, total: 10_000_000, unit: 'bytes', rate: 1_500_000 });
    progress.show({ label: 'uploading', done: 5_000_000, total: 10_000_000, unit: 'bytes', rate: 1_500_000 });
    progress.show({ label: 'running', done: 12, total: 40, unit: 'rows', rate: undefined });
    progress.end();
    assert.deepEqual(writes, ['uploading: 2.5 MB of 10.0 MB (25%, 1.5 MB/s)\n', 'running: 12 of 40 rows (30%)\n']);
    const quiet = fakeStream(false);
    progressOn(quiet.stream, true).show({ label: 'running', done: 1, total: 2, unit: 'rows', rate: undefined });
    assert.deepEqual(quiet.writes, []);
  });
});
