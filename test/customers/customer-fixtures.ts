import assert from 'node:assert/strict';
import type { Customer } from '../../src/customers/customer.schemas.js';
import { assertError, assertForbidden, assertInvalidField } from '../helpers/assert-error.js';
import { type Answer, API, type TestContext } from '../helpers/test-app.js';
import { uniqueEmail } from '../helpers/unique.js';

export const CUSTOMERS = `${API}/customers`;

/** SPEC §4: every key of the customer object, sorted. */
export const CUSTOMER_KEYS = [
  '_id',
  'autoPayment',
  'createdAt',
  'custom',
  'email',
  'externalId',
  'firstName',
  'id',
  'lastName',
  'name',
  'notes',
  'phone',
  'status',
  'type',
  'updatedAt',
  'value',
];

export const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A UUID no customer has. */
export const UNKNOWN_ID = '0190f0d0-0000-7000-8000-000000000000';

export { uniqueEmail };

/** Creates a customer through the API and insists it worked. */
export async function createCustomer(
  ctx: TestContext,
  token: string,
  body: Record<string, unknown> = {},
): Promise<Customer> {
  const res = await ctx.request('POST', CUSTOMERS, {
    token,
    body: { name: 'Maria Silva', email: uniqueEmail(), ...body },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

export { assertForbidden, assertInvalidField };

/** A SPEC §2 validation error, with or without details. */
export function assertValidationFailed(res: Answer): void {
  assertError(res, 400, 'validation_failed', { details: 'maybe' });
}

export function assertNotFound(res: Answer): void {
  assert.equal(res.status, 404, JSON.stringify(res.body));
  assert.deepEqual(res.body, { success: false, error: 'Cliente não encontrado.', code: 'not_found' });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
