import assert from 'node:assert/strict';
import { API, type TestContext, type TestTenant } from './test-app.js';

/** A definition body; `resource: 'lead'` and a text type unless overridden. */
export function fieldBody(key: string, extra: Record<string, unknown> = {}) {
  return { resource: 'lead', key, label: `Label of ${key}`, type: 'text', ...extra };
}

/** Defines a field through the API; the test fails unless it is created. */
export async function define(ctx: TestContext, tenant: TestTenant, body: Record<string, unknown>) {
  const answer = await ctx.request('POST', `${API}/fields`, { token: tenant.token, body });
  assert.equal(answer.status, 201, answer.text);
  return answer.body;
}
