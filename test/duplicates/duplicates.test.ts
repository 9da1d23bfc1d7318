import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { assertError, assertForbidden } from '../helpers/assert-error.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { createDuplicateLeads, DUPLICATE_GROUPS } from './duplicate-fixtures.js';

describeEachBackend('finding duplicates (SPEC §21)', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;
  let ids: Record<string, string>;
  const get = (path: string, token = tenant.token) => ctx.request('GET', `${API}${path}`, { token });

  before(async () => {
    tenant = await ctx.tenant();
    other = await ctx.tenant();
    ids = await createDuplicateLeads(ctx, tenant.token);
    // Another tenant's records never group with these.
    await ctx.request('POST', `${API}/leads`, { token: other.token, body: { name: 'x', email: 'ana@x.com' } });
  });

  it('lists groups of leads sharing a key, largest first, each key normalised', async () => {
    const res = await get('/leads/duplicates');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.map((group: { key: object; count: number }) => [group.key, group.count]),
      DUPLICATE_GROUPS,
    );
    assert.deepEqual(new Set(res.body[0].ids), new Set([ids.ana1, ids.ana2, ids.ana3]));
    const phones = await get('/leads/duplicates?kind=phone');
    assert.deepEqual(phones.body.length, 1, 'a phone that is no number matches none');
  });

  it('pages by X-Next-Cursor, every group once', async () => {
    const seen: string[] = [];
    let url = '/leads/duplicates?limit=1';
    for (let pages = 0; pages < 10; pages++) {
      const res = await get(url);
      assert.equal(res.status, 200, res.text);
      seen.push(...res.body.map((group: { key: { value: string } }) => group.key.value));
      const next = res.headers['x-next-cursor'];
      if (!next) break;
      url = `/leads/duplicates?limit=1&cursor=${encodeURIComponent(String(next))}`;
    }
    assert.deepEqual(seen, ['ana@x.com', 'brunosilva@gmail.com', '+5511987654321']);
    assert.equal((await get('/leads/duplicates?cursor=forged.cursor')).status, 400);
    const firstPage = await get('/leads/duplicates?limit=1');
    const cursor = encodeURIComponent(String(firstPage.headers['x-next-cursor']));
    assert.equal(
      (await get(`/leads/duplicates?limit=1&kind=email&cursor=${cursor}`)).status,
      400,
      'bound to its query',
    );
    assert.equal((await get(`/leads/duplicates?limit=1&cursor=${cursor}`, other.token)).status, 400, 'and its tenant');
  });

  it('lists the leads that share a key with one, each with the keys it shares, as full objects', async () => {
    const res = await get(`/leads/${ids.ana3}/duplicates`);
    assert.equal(res.status, 200, res.text);
    const found = new Map(
      res.body.map((match: { record: { _id: string }; matchedOn: string[] }) => [match.record._id, match.matchedOn]),
    );
    assert.deepEqual(found.get(ids.ana1), ['email']);
    assert.deepEqual(found.get(ids.ana2), ['email']);
    assert.deepEqual(found.get(ids.phone1), ['phone']);
    assert.equal(found.size, 3);
    assert.ok('phone' in res.body[0].record, 'the full lead');
    assert.deepEqual((await get(`/leads/${ids.alone}/duplicates`)).body, []);
    assertError(await get(`/leads/${ids.ana3}/duplicates`, other.token), 404, 'not_found');
  });

  it('finds customers the same way, and needs the read scope of each resource', async () => {
    for (const email of ['eva@w.com', 'Eva+erp@w.com']) {
      const made = await ctx.request('POST', `${API}/customers`, {
        token: tenant.token,
        body: { name: 'Eva', email, phone: '+1 415 555 2671' },
      });
      assert.equal(made.status, 201, made.text);
    }
    const groups = await get('/customers/duplicates');
    assert.deepEqual(
      groups.body.map((group: { key: { kind: string } }) => group.key.kind),
      ['email', 'phone'],
    );
    const customersOnly = (await ctx.token(tenant.id, ['customers:read'])).token;
    assertForbidden(await get('/leads/duplicates', customersOnly));
    assertForbidden(await get(`/leads/${ids.ana1}/duplicates`, customersOnly));
    assert.equal((await get('/customers/duplicates', customersOnly)).status, 200);
  });
});
