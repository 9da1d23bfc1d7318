import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { npmStartFlags } from '../helpers/npm-start.js';

const MiB = 1024 * 1024;

/** The default shedding threshold as a process started with these Node flags computes it. */
function thresholdUnder(flags: string[]): { threshold: number; limit: number } {
  const script =
    "const { defaultMaxHeapUsedBytes } = await import('./src/http/load-shedding.ts');" +
    "const { getHeapStatistics } = await import('node:v8');" +
    'console.log(JSON.stringify({ threshold: defaultMaxHeapUsedBytes(), limit: getHeapStatistics().heap_size_limit }));';
  const out = execFileSync(process.execPath, [...flags, '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1) as string);
}

/** `npm start`'s Node flags, and the old generation's cap among them. */
const START_FLAGS = npmStartFlags('.');
const CAP = START_FLAGS.map((flag) => /^--max-old-space-size=(\d+)$/.exec(flag)?.[1]).find(Boolean);

describe('the default heap threshold for shedding (FUNIL_MAX_HEAP_USED_MB unset)', () => {
  it("lies below the old generation's cap that npm start sets, so a 503 comes before V8 runs out", () => {
    assert.ok(CAP, `npm start sets no --max-old-space-size: ${START_FLAGS.join(' ')}`);
    const { threshold } = thresholdUnder([`--max-old-space-size=${CAP}`]);
    assert.ok(threshold < Number(CAP) * MiB, `sheds at ${threshold / MiB} MiB, the cap is ${CAP} MiB`);
    assert.ok(threshold > (Number(CAP) * MiB) / 2, `sheds already at ${threshold / MiB} MiB`);
  });

  it('gives the young generation the same room on every Node version: on Node 24 it would otherwise be sized from the capped old generation', () => {
    // Three semi-spaces of 16 MiB, as Node 20 and 22 have by default. Node 24 under the cap alone starts
    // with a 1 MiB new space and a 320 MiB limit, and served a third of the requests (issue 21's notes).
    const { limit } = thresholdUnder(START_FLAGS);
    assert.equal(
      limit / MiB,
      Number(CAP) + 48,
      `npm start's flags (${START_FLAGS.join(' ')}) give a heap limit of ${limit / MiB} MiB`,
    );
  });

  it("is 90 % of the old generation's room on a default heap", () => {
    const { threshold, limit } = thresholdUnder([]);
    assert.ok(threshold < limit * 0.9 && threshold > limit * 0.8, `${threshold / MiB} MiB of ${limit / MiB} MiB`);
  });
});
