import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import {
  assertInvalidField,
  assertNotFound,
  CUSTOMER_KEYS,
  CUSTOMERS,
  createCustomer,
  UNKNOWN_ID,
  uniqueEmail,
} from './customer-fixtures.js';

describeEachBackend('GET and DELETE /customers', (ctx) => {
  let tenant: TestTenant;
  /** A tenant with 101 customers, inserted directly, for the list limits. */
  let crowded: TestTenant;
  before(async () => {
    tenant = await ctx.tenant('A');
    crowded = await ctx.tenant('Crowded');
    await ctx.db
      .insertInto('customers')
      .values(
        Array.from({ length: 101 }, (_, i) => ({
          id: newId(),
          tenantId: crowded.id,
          name: `Cliente ${i}`,
          email: `cliente-${i}@example.com`,
          status: 'active',
          type: 'individual',
          value: 0,
          autoPayment: false,
        })),
      )
      .execute();
  });

  const list = (query?: Record<string, string>, token = tenant.token) =>
    ctx.request('GET', CUSTOMERS, { token, query });

  it('returns the customer by id as the full object (seed §4.2)', async () => {
    const created = await createCustomer(ctx, tenant.token, { phone: '1', notes: 'n', value: 3.3, type: 'company' });
    const res = await ctx.request('GET', `${CUSTOMERS}/${created._id}`, { token: tenant.token });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), CUSTOMER_KEYS);
    assert.deepEqual(res.body, created);
  });

  it('answers 404 for an unknown id and for ids that are not UUIDs (seed §4.2 rule 3, SPEC §2)', async () => {
    assertNotFound(await ctx.request('GET', `${CUSTOMERS}/${UNKNOWN_ID}`, { token: tenant.token }));
    for (const id of ['abc', '1', `${UNKNOWN_ID}x`, "1'%20OR%20'1'='1"]) {
      assertNotFound(await ctx.request('GET', `${CUSTOMERS}/${id}`, { token: tenant.token }));
    }
  });

  it('lists full customer objects, newest first (seed §4.2, SPEC §4, §6)', async () => {
    const fresh = await ctx.tenant('Fresh');
    const first = await createCustomer(ctx, fresh.token, { name: 'Primeiro Cliente' });
    const second = await createCustomer(ctx, fresh.token, { name: 'Segundo Cliente', notes: 'nota', phone: '2' });
    const third = await createCustomer(ctx, fresh.token, { name: 'Terceiro Cliente' });
    const res = await list(undefined, fresh.token);
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.body));
    assert.deepEqual(res.body, [third, second, first]);
    for (const item of res.body) assert.deepEqual(Object.keys(item).sort(), CUSTOMER_KEYS);
  });

  it('lists an empty tenant as []', async () => {
    const empty = await ctx.tenant('Empty');
    const res = await list(undefined, empty.token);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, []);
  });

  it('returns 100 rows by default and up to `limit` (1–1000) (SPEC §6)', async () => {
    const all = await list({ limit: '1000' }, crowded.token);
    assert.equal(all.status, 200);
    assert.equal(all.body.length, 101);
    const byDefault = await list(undefined, crowded.token);
    assert.equal(byDefault.body.length, 100);
    assert.deepEqual(byDefault.body, all.body.slice(0, 100));
    const one = await list({ limit: '1' }, crowded.token);
    assert.deepEqual(one.body, all.body.slice(0, 1));
    assert.equal((await list({ limit: '101' }, crowded.token)).body.length, 101);
  });

  it('rejects a bad limit with a 400 naming `limit` (SPEC §6)', async () => {
    for (const limit of ['0', '1001', '-1', 'abc', '1.5', '']) {
      assertInvalidField(await list({ limit }, crowded.token), 'limit');
    }
  });

  it('rejects an unknown query parameter with a 400 naming it (SPEC §6)', async () => {
    const message = assertInvalidField(await list({ foo: 'bar' }), 'foo');
    assert.equal(message, "Campo 'foo': campo desconhecido.");
  });

  it('deletes: 200 {success: true}, then the customer is gone (seed §4.2)', async () => {
    const customer = await createCustomer(ctx, tenant.token);
    const res = await ctx.request('DELETE', `${CUSTOMERS}/${customer._id}`, { token: tenant.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true });
    assertNotFound(await ctx.request('GET', `${CUSTOMERS}/${customer._id}`, { token: tenant.token }));
    assertNotFound(await ctx.request('DELETE', `${CUSTOMERS}/${customer._id}`, { token: tenant.token }));
    assertNotFound(
      await ctx.request('PUT', `${CUSTOMERS}/${customer._id}`, { token: tenant.token, body: { phone: '1' } }),
    );
    const listed = await list({ limit: '1000' });
    assert.ok(!listed.body.some((c: { _id: string }) => c._id === customer._id));
    const rows = await ctx.db.selectFrom('customers').select('id').where('id', '=', customer._id).execute();
    assert.deepEqual(rows, []);
  });

  it('answers 404 when deleting an unknown id or an id that is not a UUID (seed §4.2 rule 3)', async () => {
    assertNotFound(await ctx.request('DELETE', `${CUSTOMERS}/${UNKNOWN_ID}`, { token: tenant.token }));
    assertNotFound(await ctx.request('DELETE', `${CUSTOMERS}/nope`, { token: tenant.token }));
  });

  it('frees the e-mail of a deleted customer for reuse (SPEC §4)', async () => {
    const email = uniqueEmail('reuse');
    const customer = await createCustomer(ctx, tenant.token, { email });
    assert.equal((await ctx.request('DELETE', `${CUSTOMERS}/${customer._id}`, { token: tenant.token })).status, 200);
    const again = await createCustomer(ctx, tenant.token, { email: email.toUpperCase() });
    assert.equal(again.email, email);
    assert.notEqual(again._id, customer._id);
  });
});
