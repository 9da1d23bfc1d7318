import assert from 'node:assert/strict';
import { assertError } from '../helpers/assert-error.js';
import { type Answer, API, type TestContext } from '../helpers/test-app.js';

/** SPEC §2: the exact lead-creation message, in each language. */
export const LEAD_MESSAGE = 'O nome é obrigatório e é necessário informar um e-mail ou telefone.';
export const LEAD_MESSAGE_EN = 'Name is required, and an e-mail or a phone is also needed.';
export const LEAD_NOT_FOUND = 'Lead não encontrado.';
export const DEFAULT_STATUSES = 'new, contacted, qualified, proposal, negotiation, won, lost';

/** SPEC §3: the full lead object, always every key. */
export const LEAD_KEYS = [
  '_id',
  'createdAt',
  'createdBy',
  'custom',
  'customerId',
  'email',
  'externalId',
  'lastContact',
  'name',
  'notes',
  'phone',
  'pipeline',
  'score',
  'source',
  'status',
  'tenant',
  'updatedAt',
];

/** Seed §2.1 rule 2: a list item has exactly these nine keys. */
export const LIST_ITEM_KEYS = [
  '_id',
  'createdAt',
  'email',
  'lastContact',
  'name',
  'score',
  'source',
  'status',
  'updatedAt',
];

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** A well-formed id that names no lead. */
export const UNKNOWN_ID = '01900000-0000-7000-8000-000000000000';

/** Creates a lead and returns the full object; fails the test unless the answer is 201. */
export async function createLead(
  ctx: TestContext,
  token: string,
  body: Record<string, unknown> = {},
): Promise<Record<string, unknown> & { _id: string }> {
  const res = await ctx.request('POST', `${API}/leads`, {
    token,
    body: { name: 'Maria Silva', email: 'maria@example.com', ...body },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

export async function readLead(ctx: TestContext, token: string, id: string): Promise<Answer> {
  return ctx.request('GET', `${API}/leads/${id}`, { token });
}

/** Asserts a SPEC §2 validation error whose first detail names `field`. */
export function assertFieldError(res: Answer, field: string, message?: string): void {
  const body = assertError(res, 400, 'validation_failed', { details: true });
  assert.equal(body.details[0]?.field, field, JSON.stringify(body));
  if (message !== undefined) assert.equal(body.details[0].message, message);
}

export function assertNotFound(res: Answer): void {
  assert.equal(res.status, 404, JSON.stringify(res.body));
  assert.deepEqual(res.body, { success: false, error: LEAD_NOT_FOUND, code: 'not_found' });
}

/** Lets the clock move past the millisecond of the previous write. */
export const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
