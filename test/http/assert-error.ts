import assert from 'node:assert/strict';
import type { Answer } from '../helpers/test-app.js';

/**
 * Asserts the SPEC §2 error shape: exactly `success: false`, a non-empty `error` string and
 * `code`, plus `details` only when given; served as JSON.
 */
export function assertError(res: Answer, status: number, code: string, options: { details?: boolean } = {}): void {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${JSON.stringify(res.body)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const expectedKeys = options.details ? ['code', 'details', 'error', 'success'] : ['code', 'error', 'success'];
  assert.deepEqual(Object.keys(res.body).sort(), expectedKeys);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, code);
  assert.equal(typeof res.body.error, 'string');
  assert.notEqual(res.body.error.trim(), '');
}

export function assertForbidden(res: Answer): void {
  assertError(res, 403, 'forbidden');
}
