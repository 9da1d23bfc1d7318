import assert from 'node:assert/strict';
import type { Answer } from './test-app.js';

/**
 * The one check of the SPEC §2 error shape: the status, exactly `success: false`, a non-empty
 * `error` string and `code`, `details` when `details` says so (`true`: present; `'maybe'`: either),
 * nothing else; served as JSON. Returns the body.
 */
export function assertError(
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  res: { status: number; headers: Readonly<Record<string, unknown>>; body: any },
  status: number,
  code: string,
  options: { details?: boolean | 'maybe'; what?: string } = {},
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
): any {
  const what = options.what ? `${options.what}: ` : '';
  assert.equal(res.status, status, `${what}expected ${status} ${code}, got ${res.status}: ${JSON.stringify(res.body)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, what);
  const withDetails = options.details === true || (options.details === 'maybe' && res.body.details !== undefined);
  const expectedKeys = withDetails ? ['code', 'details', 'error', 'success'] : ['code', 'error', 'success'];
  assert.deepEqual(Object.keys(res.body).sort(), expectedKeys, `${what}${JSON.stringify(res.body)}`);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, code);
  assert.equal(typeof res.body.error, 'string');
  assert.notEqual(res.body.error.trim(), '');
  return res.body;
}

/** A 400 whose details name `field`; returns that detail's message. */
export function assertInvalidField(res: Answer, field: string): string {
  const body = assertError(res, 400, 'validation_failed', { details: true });
  const detail = body.details.find((d: { field: string }) => d.field === field);
  assert.ok(detail, `no detail names '${field}': ${JSON.stringify(body.details)}`);
  return detail.message;
}

export function assertForbidden(res: Answer): void {
  assertError(res, 403, 'forbidden');
}
