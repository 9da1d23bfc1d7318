import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { leadSchemas } from '../../src/leads/lead.schemas.js';
import { newId } from '../../src/shared/ids.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { assertFieldError, createLead, DEFAULT_STATUSES, LIST_ITEM_KEYS } from './lead-fixtures.js';

const _DEFAULT_STATUS_LIST = DEFAULT_STATUSES.split(', ');

describeEachBackend('GET /leads', (ctx) => {
  let tenant: TestTenant;
  let created: Record<string, unknown>[];
  const list = (query?: Record<string, string>) => ctx.request('GET', `${API}/leads`, { token: tenant.token, query });

  before(async () => {
    tenant = await ctx.tenant();
    created = [];
    for (const name of ['First', 'Second', 'Third']) {
      created.push(
        await createLead(ctx, tenant.token, {
          name,
          phone: '11 5555-0000',
          notes: 'private',
          source: 'form',
          lastContact: '2026-11-20T10:00:00Z',
        }),
      );
    }
  });

  it('answers a plain array of items with exactly the nine seed keys (seed §2.1 rule 2)', async () => {
    const res = await list();
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.body));
    assert.equal(res.body.length, 3);
    for (const item of res.body) assert.deepEqual(Object.keys(item).sort(), LIST_ITEM_KEYS);
    const full = created[2] as Record<string, unknown>;
    assert.deepEqual(res.body[0], {
      _id: full._id,
      name: 'Third',
      email: full.email,
      status: 'new',
      score: 0,
      lastContact: '2026-11-20T10:00:00.000Z',
      source: 'form',
      createdAt: full.createdAt,
      updatedAt: full.updatedAt,
    });
  });

  it('writes each item as the schema would, byte for byte, in its key order, hostile text included (seed §2.1 rule 2)', async () => {
    // Lists read rows their own way (timestamps as PostgreSQL's text, no camel-case copy): the answer
    // must still be what the response schema writes for the stored lead, nothing more, whatever the text holds.
    const hostile = await ctx.tenant('Hostile text');
    const names = [
      'Quote " and back\\slash \\"',
      'Line\nbreak\tand\r\u0001\u001f\u007f control',
      'Emoji 😀, accents ção, U+2028 \u2028 and </script>',
      '{"_id":"x","notes":"injected"}',
    ];
    for (const [i, name] of names.entries()) {
      await createLead(ctx, hostile.token, {
        name,
        email: i % 2 ? null : `h${i}@example.com`,
        phone: i % 2 ? `+55 ${i}` : null,
        notes: 'never listed',
        score: i * 33,
        lastContact: i % 2 ? null : '0999-01-02T03:04:05.006Z',
      });
    }
    const res = await ctx.request('GET', `${API}/leads`, { token: hostile.token });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^application\/json; charset=utf-8$/);
    const order = Object.keys(leadSchemas.LeadListItem.properties);
    const expected: string[] = [];
    for (const item of res.body as { _id: string }[]) {
      const full = await ctx.request('GET', `${API}/leads/${item._id}`, { token: hostile.token });
      expected.push(JSON.stringify(Object.fromEntries(order.map((key) => [key, full.body[key]]))));
    }
    assert.deepEqual(
      res.body.map((item: { name: string }) => item.name),
      [...names].reverse(),
    );
    assert.equal(res.text, `[${expected.join(',')}]`);
  });

  it('lists the newest lead first (SPEC §6)', async () => {
    const res = await list();
    assert.deepEqual(
      res.body.map((item: { name: string }) => item.name),
      ['Third', 'Second', 'First'],
    );
  });

  it('returns at most `limit` items (SPEC §6)', async () => {
    const res = await list({ limit: '2' });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.map((item: { name: string }) => item.name),
      ['Third', 'Second'],
    );
  });

  it('rejects a limit outside 1–1000 or not an integer, naming `limit` (SPEC §6)', async () => {
    for (const limit of ['0', '1001', 'abc', '-1', '1.5', '']) {
      assertFieldError(await list({ limit }), 'limit');
    }
    const twice = await ctx.request('GET', `${API}/leads?limit=1&limit=2`, { token: tenant.token });
    assertFieldError(twice, 'limit');
  });

  it('rejects an unknown query parameter, naming it (SPEC §6)', async () => {
    assertFieldError(await list({ bogus: '1' }), 'bogus', "Campo 'bogus': campo desconhecido.");
  });

  it('returns 100 items by default and up to 1000 with limit (SPEC §6)', async () => {
    const big = await ctx.tenant('Big');
    await ctx.db
      .insertInto('leads')
      .values(
        Array.from({ length: 101 }, (_, i) => ({
          id: newId(),
          tenantId: big.id,
          name: `Bulk ${i}`,
          email: `bulk${i}@example.com`,
          status: 'new',
          score: 0,
          createdBy: big.tokenId,
        })),
      )
      .execute();
    const byDefault = await ctx.request('GET', `${API}/leads`, { token: big.token });
    assert.equal(byDefault.status, 200);
    assert.equal(byDefault.body.length, 100);
    // One statement: one createdAt for all, so the (time-ordered) id breaks the tie, newest first.
    assert.equal(byDefault.body[0].name, 'Bulk 100');
    assert.equal(byDefault.body[99].name, 'Bulk 1');
    const all = await ctx.request('GET', `${API}/leads`, { token: big.token, query: { limit: '1000' } });
    assert.equal(all.status, 200);
    assert.equal(all.body.length, 101);
    const one = await ctx.request('GET', `${API}/leads`, { token: big.token, query: { limit: '1' } });
    assert.equal(one.body.length, 1);
  });

  it('answers an empty array for a tenant without leads (seed §4.1)', async () => {
    const empty = await ctx.tenant('Empty');
    const res = await ctx.request('GET', `${API}/leads`, { token: empty.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, []);
  });
});
