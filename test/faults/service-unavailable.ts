import assert from 'node:assert/strict';
import { assertError } from '../helpers/assert-error.js';

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  body: any;
}

/** SPEC §2: a 503 is `service_unavailable`, in the one error shape, with a Retry-After in seconds. */
export function assertServiceUnavailable(answer: Answer, what = ''): void {
  assertError(answer, 503, 'service_unavailable', { what });
  assert.match(String(answer.headers['retry-after']), /^[1-9]\d*$/, `${what}: Retry-After`);
}
