import assert from 'node:assert/strict';
import { API, type TestContext } from '../helpers/test-app.js';

/** Leads by name whose keys, normalised, make DUPLICATE_GROUPS (SPEC §21); `alone` shares nothing. */
const DUPLICATE_LEADS: readonly [string, Record<string, string>][] = [
  ['ana1', { email: 'ana@x.com' }],
  ['ana2', { email: ' ANA+form@x.com' }],
  ['ana3', { email: 'ana@x.com', phone: '(11) 98765-4321' }],
  ['bruno1', { email: 'bruno.silva@gmail.com' }],
  ['bruno2', { email: 'brunosilva@googlemail.com' }],
  ['phone1', { phone: '+55 11 98765-4321' }],
  ['bad1', { phone: '12345' }],
  ['bad2', { phone: '12345' }],
  ['alone', { email: 'alone@x.com' }],
];

/** The groups of DUPLICATE_LEADS, largest first, as `[key, count]`: a phone that is no number matches none. */
export const DUPLICATE_GROUPS = [
  [{ kind: 'email', value: 'ana@x.com' }, 3],
  [{ kind: 'email', value: 'brunosilva@gmail.com' }, 2],
  [{ kind: 'phone', value: '+5511987654321' }, 2],
];

/** Creates DUPLICATE_LEADS with `token`; their ids by name. */
export async function createDuplicateLeads(ctx: TestContext, token: string): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const [name, body] of DUPLICATE_LEADS) {
    const res = await ctx.request('POST', `${API}/leads`, { token, body: { name, ...body } });
    assert.equal(res.status, 201, res.text);
    ids[name] = res.body._id;
  }
  return ids;
}
