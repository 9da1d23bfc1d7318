import assert from 'node:assert/strict';

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  body: any;
}

/** SPEC §2: a 503 is `service_unavailable`, in the one error shape, with a Retry-After in seconds. */
export function assertServiceUnavailable(answer: Answer, what = ''): void {
  assert.equal(answer.status, 503, `${what}: ${JSON.stringify(answer.body)}`);
  assert.match(String(answer.headers['content-type']), /^application\/json/, what);
  assert.equal(answer.body.success, false, what);
  assert.equal(answer.body.code, 'service_unavailable', what);
  assert.equal(typeof answer.body.error, 'string', what);
  assert.notEqual(answer.body.error.trim(), '', what);
  assert.match(String(answer.headers['retry-after']), /^[1-9]\d*$/, `${what}: Retry-After`);
}
