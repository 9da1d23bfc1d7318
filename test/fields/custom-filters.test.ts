import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertError } from '../helpers/assert-error.js';
import { define, fieldBody } from '../helpers/custom-fields.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

describeEachBackend('list filters by custom fields (SPEC §16)', (ctx) => {
  let tenant: TestTenant;
  const ids = new Map<string, string>();

  it('setup: customers with values of every type', async () => {
    tenant = await ctx.tenant();
    const fields: [string, Record<string, unknown>][] = [
      ['origin', { type: 'text' }],
      ['employees', { type: 'integer' }],
      ['rating', { type: 'number' }],
      ['partner', { type: 'boolean' }],
      ['since', { type: 'date' }],
      ['called', { type: 'datetime' }],
      ['tier', { type: 'select', options: ['gold', 'silver'] }],
      ['products', { type: 'multiselect', options: ['crm', 'erp', 'bi'] }],
    ];
    for (const [key, extra] of fields) await define(ctx, tenant, fieldBody(key, { resource: 'customer', ...extra }));
    const records: [string, Record<string, unknown>][] = [
      [
        'a',
        {
          origin: 'Google Ads',
          employees: 10,
          rating: 4.5,
          partner: true,
          since: '2020-01-31',
          called: '2026-11-24T10:00:00.000Z',
          tier: 'gold',
          products: ['crm', 'erp'],
        },
      ],
      ['b', { origin: 'google ads', employees: 100, rating: 4.5, partner: false, tier: 'gold', products: ['erp'] }],
      ['c', { origin: 'Referral', employees: 10, tier: 'silver', products: ['bi', 'crm'] }],
      ['d', {}],
    ];
    for (const [name, custom] of records) {
      const answer = await ctx.request('POST', `${API}/customers`, {
        token: tenant.token,
        body: { name, email: `${name}@example.com`, custom },
      });
      assert.equal(answer.status, 201, answer.text);
      ids.set(name, answer.body._id);
    }
  });

  async function names(query: string): Promise<string[]> {
    const answer = await ctx.request('GET', `${API}/customers?${query}`, { token: tenant.token });
    assert.equal(answer.status, 200, `${query}: ${answer.text}`);
    return answer.body.map((customer: { name: string }) => customer.name).sort();
  }

  it('equality for each type, the text converted to the field type; multiselect: contains', async () => {
    const cases: [string, string[]][] = [
      ['custom.origin=Google%20Ads', ['a']],
      ['custom.employees=10', ['a', 'c']],
      ['custom.employees=10.0', ['a', 'c']],
      ['custom.rating=4.5', ['a', 'b']],
      ['custom.partner=true', ['a']],
      ['custom.partner=false', ['b']],
      ['custom.since=2020-01-31', ['a']],
      ['custom.called=2026-11-24T07:00:00-03:00', ['a']],
      ['custom.tier=gold', ['a', 'b']],
      ['custom.tier=%20gold%20', ['a', 'b']],
      ['custom.tier=bronze', []],
      ['custom.products=crm', ['a', 'c']],
      ['custom.products=erp', ['a', 'b']],
      ['custom.tier=gold&custom.products=crm', ['a']],
      ['custom.tier=gold&custom.employees=100&status=active', ['b']],
      ['custom.employees=10&q=c%40e', ['c']],
    ];
    for (const [query, expected] of cases) assert.deepEqual(await names(query), expected, query);
  });

  it('an undefined key, or a text the type cannot hold, is a 400 naming custom.<key>', async () => {
    const cases: [string, string][] = [
      ['custom.nope=1', 'custom.nope'],
      ['custom.=1', 'custom.'],
      ['custom.employees=ten', 'custom.employees'],
      ['custom.employees=1.5', 'custom.employees'],
      ['custom.employees=', 'custom.employees'],
      ['custom.partner=yes', 'custom.partner'],
      ['custom.since=2020-02-30', 'custom.since'],
      ['custom.called=yesterday', 'custom.called'],
      ['customs.tier=gold', 'customs.tier'],
    ];
    for (const [query, field] of cases) {
      const answer = await ctx.request('GET', `${API}/customers?${query}`, { token: tenant.token });
      assertError(answer, 400, 'validation_failed', { details: true });
      assert.deepEqual(
        answer.body.details.map((detail: { field: string }) => detail.field),
        [field],
        query,
      );
    }
    const twice = await ctx.request('GET', `${API}/customers?custom.tier=gold&custom.tier=silver`, {
      token: tenant.token,
    });
    assertError(twice, 400, 'validation_failed', { details: true });
  });

  it("another tenant's field of the same key filters that tenant's records only", async () => {
    const other = await ctx.tenant();
    await define(ctx, other, fieldBody('tier', { resource: 'customer' }));
    await ctx.request('POST', `${API}/customers`, {
      token: other.token,
      body: { name: 'theirs', email: 'theirs@example.com', custom: { tier: 'gold' } },
    });
    const theirs = await ctx.request('GET', `${API}/customers?custom.tier=gold`, { token: other.token });
    assert.deepEqual(
      theirs.body.map((customer: { name: string }) => customer.name),
      ['theirs'],
    );
    assert.deepEqual(await names('custom.tier=gold'), ['a', 'b']);
  });

  it('pages through a filtered list; a cursor is bound to its filters', async () => {
    const first = await ctx.request('GET', `${API}/customers?custom.tier=gold&limit=1`, { token: tenant.token });
    assert.equal(first.body.length, 1);
    const cursor = String(first.headers['x-next-cursor']);
    const second = await ctx.request(
      'GET',
      `${API}/customers?custom.tier=gold&limit=1&cursor=${encodeURIComponent(cursor)}`,
      { token: tenant.token },
    );
    assert.equal(second.body.length, 1);
    assert.notEqual(second.body[0]._id, first.body[0]._id);
    const moved = await ctx.request(
      'GET',
      `${API}/customers?custom.tier=silver&limit=1&cursor=${encodeURIComponent(cursor)}`,
      { token: tenant.token },
    );
    assertError(moved, 400, 'validation_failed', { details: true });
  });

  it('leads filter the same way', async () => {
    await define(ctx, tenant, fieldBody('campaign'));
    for (const campaign of ['black-friday', 'launch', 'black-friday']) {
      await ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        body: { name: campaign, phone: '1', custom: { campaign } },
      });
    }
    const answer = await ctx.request('GET', `${API}/leads?custom.campaign=black-friday`, { token: tenant.token });
    assert.equal(answer.body.length, 2);
  });
});
