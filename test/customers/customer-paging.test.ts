import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, it } from 'node:test';
import { type Insertable, sql } from 'kysely';
import type { CustomerTable } from '../../src/db/tables.js';
import { newId } from '../../src/shared/ids.js';
import { assertEachOnce, flipChar, ids, walk } from '../helpers/list-walk.js';
import { describeEachBackend, type TestContext, type TestTenant } from '../helpers/test-app.js';
import { assertInvalidField, CUSTOMER_KEYS, CUSTOMERS, createCustomer } from './customer-fixtures.js';

const ROWS = 257;
const LIMIT = 37;
const SORT_SQL = { createdAt: 'created_at', updatedAt: 'updated_at', name: 'name' } as const;
const SORTS = Object.keys(SORT_SQL).flatMap((field) => [field, `-${field}`]);
const NAMES = ['Ana', 'ana', 'Álvaro', 'Bruno', 'Émile', '100% Real', 'under_score', 'Zoe'];
const STATUSES = ['active', 'inactive', 'blocked'];
const TYPES = ['individual', 'company'];

/**
 * Customers in one statement with few distinct sort values (runs of ties that pages end inside),
 * UUIDv7 and v4 ids mixed, and a few rows made to test the search: a literal %, _ and a phone.
 */
async function insertCustomers(ctx: TestContext, tenant: TestTenant, count: number, label: string) {
  const rows: Insertable<CustomerTable>[] = Array.from({ length: count }, (_, i) => ({
    id: i % 2 === 0 ? newId() : randomUUID(),
    tenantId: tenant.id,
    name: NAMES[(i * 5) % NAMES.length] as string,
    email: `${label}${i}@example.com`,
    phone: i % 3 === 0 ? `+55 21 9${String(i).padStart(4, '0')}-1234` : null,
    status: STATUSES[i % STATUSES.length] as string,
    type: TYPES[i % 5 === 0 ? 1 : 0] as string,
    autoPayment: i % 2 === 0,
    updatedAt: new Date(Date.UTC(2026, 1, 1, 0, (i * 7) % 19)),
  }));
  await ctx.db.insertInto('customers').values(rows).execute();
  await sql`update customers set created_at = timestamptz '2026-01-01T00:00:00Z' + ((length(email) + length(name)) % 13) * interval '1 hour'
    where tenant_id = ${tenant.id}`.execute(ctx.db);
  return rows.map((row) => row.id);
}

async function expectedOrder(ctx: TestContext, tenantId: string, sort: string, where = sql`true`): Promise<string[]> {
  const descending = sort.startsWith('-');
  const expression = SORT_SQL[(descending ? sort.slice(1) : sort) as keyof typeof SORT_SQL];
  const direction = sql.raw(descending ? 'desc' : 'asc');
  const result = await sql<{ id: string }>`select id from customers where tenant_id = ${tenantId} and ${where}
    order by ${sql.raw(expression)} ${direction}, id ${direction}`.execute(ctx.db);
  return result.rows.map((row) => row.id);
}

describeEachBackend('GET /customers: keyset paging, filters and cursors (SPEC §6)', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;
  let otherIds: string[];
  const list = (query: Record<string, string>, token = tenant.token) => ctx.request('GET', CUSTOMERS, { token, query });
  const listIds = async (query: Record<string, string>) => {
    const res = await list({ limit: '1000', ...query });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return ids(res.body);
  };
  const firstCursor = async (query: Record<string, string>) => {
    const res = await list({ limit: '5', ...query });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return String(res.headers['x-next-cursor']);
  };

  before(async () => {
    tenant = await ctx.tenant('Paged');
    other = await ctx.tenant('Other');
    await insertCustomers(ctx, tenant, ROWS, 'customer');
    otherIds = await insertCustomers(ctx, other, 30, 'other');
  });

  for (const sort of SORTS) {
    it(`walks sort=${sort} in pages of ${LIMIT}, by Link and by X-Next-Cursor: every row once, in ORDER BY order (SPEC §6)`, async () => {
      const expected = await expectedOrder(ctx, tenant.id, sort);
      assert.equal(expected.length, ROWS);
      for (const follow of ['link', 'cursor'] as const) {
        const walked = await walk(ctx, tenant.token, CUSTOMERS, { sort, limit: String(LIMIT) }, follow);
        assertEachOnce(walked.items);
        assert.deepEqual(ids(walked.items), expected, `sort=${sort} followed by ${follow}`);
        assert.equal(walked.pageSizes.length, Math.ceil(ROWS / LIMIT));
      }
      assert.deepEqual(await listIds({ sort }), expected);
    });
  }

  it('ends some page inside a run of equal sort values for every sort, so the id tie-breaker is exercised', async () => {
    for (const field of Object.keys(SORT_SQL)) {
      const column = sql.raw(SORT_SQL[field as keyof typeof SORT_SQL]);
      const result = await sql<{ value: string }>`select ${column}::text as value from customers
        where tenant_id = ${tenant.id} order by ${column}, id`.execute(ctx.db);
      const values = result.rows.map((row) => row.value);
      let splits = 0;
      for (let end = LIMIT; end < values.length; end += LIMIT) if (values[end - 1] === values[end]) splits++;
      assert.ok(splits > 0, `no page boundary of sort=${field} falls inside a run of equal values`);
    }
  });

  it('pages newest first by default (-createdAt) and lists full customer objects (SPEC §4, §6)', async () => {
    const walked = await walk(ctx, tenant.token, CUSTOMERS, { limit: String(LIMIT) }, 'link');
    assert.deepEqual(ids(walked.items), await expectedOrder(ctx, tenant.id, '-createdAt'));
    for (const item of walked.items) {
      assert.deepEqual(Object.keys(item).sort(), CUSTOMER_KEYS);
      assert.equal(item.id, item._id);
    }
  });

  it('writes each item as GET /customers/:id writes the customer, byte for byte: values, booleans, hostile text (SPEC §4)', async () => {
    // Lists read rows their own way (timestamps as text, snake_case names): items must match the single answer.
    const own = await ctx.tenant('Byte for byte');
    const cases = [
      { name: 'Zero Value', value: 0, autoPayment: false },
      { name: 'Cents "quoted" \\ back', value: 0.07, autoPayment: true },
      { name: 'Line\nbreak\u0001 and 😀 ção \u2028', value: 19.99, autoPayment: false },
      { name: 'Round Number', value: 1234.5, notes: 'note', phone: '+55 11 1234' },
      { name: 'Largest Value', value: 999_999_999_999.99, firstName: null },
    ];
    for (const body of cases) await createCustomer(ctx, own.token, body);
    const res = await list({}, own.token);
    assert.equal(res.status, 200);
    const singles: string[] = [];
    for (const item of res.body as { _id: string }[]) {
      const single = await ctx.request('GET', `${CUSTOMERS}/${item._id}`, { token: own.token });
      singles.push(single.text);
    }
    assert.equal(res.text, `[${singles.join(',')}]`);
    assert.deepEqual(
      res.body.map((item: { value: number }) => item.value),
      cases.map((body) => body.value).reverse(),
    );
  });

  it('filters by status (comma list) and type; a bad value is a 400 naming it (SPEC §6)', async () => {
    assert.deepEqual(
      await listIds({ status: 'blocked' }),
      await expectedOrder(ctx, tenant.id, '-createdAt', sql`status = 'blocked'`),
    );
    assert.deepEqual(
      await listIds({ status: 'inactive,blocked', type: 'company' }),
      await expectedOrder(ctx, tenant.id, '-createdAt', sql`status in ('inactive', 'blocked') and type = 'company'`),
    );
    assertInvalidField(await list({ status: 'active,bogus' }), 'status');
    assertInvalidField(await list({ status: '' }), 'status');
    assertInvalidField(await list({ type: 'person' }), 'type');
    assertInvalidField(await list({ type: 'individual,company' }), 'type');
  });

  it('filters by e-mail, exact and case-insensitive (SPEC §6)', async () => {
    const [hit] = await expectedOrder(ctx, tenant.id, 'name', sql`email = 'customer42@example.com'`);
    assert.deepEqual(await listIds({ email: 'Customer42@EXAMPLE.com' }), [hit]);
    assert.deepEqual(await listIds({ email: 'customer4' }), []);
  });

  it('searches q in name, e-mail and phone, any case, with % and _ taken literally (SPEC §6)', async () => {
    const like = (pattern: string) => sql`(name ilike ${pattern} or email ilike ${pattern} or phone ilike ${pattern})`;
    assert.deepEqual(await listIds({ q: 'ANA' }), await expectedOrder(ctx, tenant.id, '-createdAt', like('%ana%')));
    assert.deepEqual(await listIds({ q: 'R42@' }), await expectedOrder(ctx, tenant.id, '-createdAt', like('%r42@%')));
    assert.deepEqual(await listIds({ q: '9004' }), await expectedOrder(ctx, tenant.id, '-createdAt', like('%9004%')));
    const percent = await listIds({ q: '00%' });
    assert.ok(percent.length > 0);
    assert.deepEqual(percent, await expectedOrder(ctx, tenant.id, '-createdAt', sql`name like '%00\\%%'`));
    const underscore = await listIds({ q: 'r_s' });
    assert.ok(underscore.length > 0);
    assert.deepEqual(underscore, await expectedOrder(ctx, tenant.id, '-createdAt', sql`name = 'under_score'`));
    assertInvalidField(await list({ q: ' ' }), 'q');
    assertInvalidField(await list({ q: 'an' }), 'q');
  });

  it('filters by updatedSince and createdSince, inclusive; a malformed one is a 400 naming it (SPEC §6)', async () => {
    const since = '2026-02-01T00:09:00.000Z';
    assert.deepEqual(
      await listIds({ updatedSince: since }),
      await expectedOrder(ctx, tenant.id, '-createdAt', sql`updated_at >= ${since}::timestamptz`),
    );
    assert.ok((await listIds({ updatedSince: since })).length < ROWS);
    const created = '2026-01-01T05:00:00Z';
    assert.deepEqual(
      await listIds({ createdSince: created }),
      await expectedOrder(ctx, tenant.id, '-createdAt', sql`created_at >= ${created}::timestamptz`),
    );
    for (const field of ['updatedSince', 'createdSince']) {
      for (const value of ['soon', '2026-01-01', '2026-02-30T00:00:00Z', '']) {
        assertInvalidField(await list({ [field]: value }), field);
      }
    }
  });

  it('rejects unknown parameters, lead-only filters included, with a 400 naming them (SPEC §6)', async () => {
    for (const name of ['bogus', 'source', 'scoreMin', 'scoreMax', 'offset']) {
      assertInvalidField(await list({ [name]: '1' }), name);
    }
    for (const sort of ['score', 'lastContact', '-score', 'email']) assertInvalidField(await list({ sort }), 'sort');
  });

  it('pages a filtered list: every matching row once, in order, by Link and by cursor (SPEC §6)', async () => {
    const query = { status: 'active,blocked', q: 'example', updatedSince: '2026-02-01T00:03:00Z', sort: 'name' };
    const expected = await expectedOrder(
      ctx,
      tenant.id,
      'name',
      sql`status in ('active', 'blocked') and email ilike '%example%' and updated_at >= '2026-02-01T00:03:00Z'`,
    );
    assert.ok(expected.length > 30);
    for (const follow of ['link', 'cursor'] as const) {
      const walked = await walk(ctx, tenant.token, CUSTOMERS, { ...query, limit: '8' }, follow);
      assertEachOnce(walked.items);
      assert.deepEqual(ids(walked.items), expected);
    }
  });

  it('refuses tampered, truncated and garbage cursors with a 400 naming `cursor` (SPEC §6)', async () => {
    const cursor = await firstCursor({ sort: 'name' });
    for (let index = 0; index < cursor.length; index++) {
      assertInvalidField(await list({ sort: 'name', cursor: flipChar(cursor, index) }), 'cursor');
    }
    for (const bad of [cursor.slice(0, -1), cursor.slice(0, 10), `${cursor}A`, 'garbage', '.', 'a.b.c', '']) {
      assertInvalidField(await list({ sort: 'name', cursor: bad }), 'cursor');
    }
  });

  it('refuses a cursor replayed with another sort or other filters (SPEC §6)', async () => {
    const cursor = await firstCursor({ sort: 'updatedAt', type: 'individual' });
    assert.equal((await list({ sort: 'updatedAt', type: 'individual', cursor })).status, 200);
    const replays: Record<string, string>[] = [
      { sort: '-updatedAt', type: 'individual' },
      { sort: 'createdAt', type: 'individual' },
      { sort: 'name', type: 'individual' },
      { type: 'individual' },
      { sort: 'updatedAt' },
      { sort: 'updatedAt', type: 'company' },
      { sort: 'updatedAt', type: 'individual', status: 'active' },
      { sort: 'updatedAt', type: 'individual', q: 'ana' },
      { sort: 'updatedAt', type: 'individual', email: 'customer1@example.com' },
      { sort: 'updatedAt', type: 'individual', createdSince: '2020-01-01T00:00:00Z' },
    ];
    for (const replay of replays) assertInvalidField(await list({ ...replay, cursor }), 'cursor');
  });

  it("refuses tenant A's cursor to tenant B and never shows B a row of A (SPEC §5.3, §6)", async () => {
    for (const sort of SORTS) {
      const cursor = await firstCursor({ sort });
      assertInvalidField(await list({ sort, cursor }, other.token), 'cursor');
      const walked = await walk(ctx, other.token, CUSTOMERS, { sort, limit: '7' }, 'cursor');
      assert.deepEqual(ids(walked.items), await expectedOrder(ctx, other.id, sort));
      assert.deepEqual(new Set(ids(walked.items)), new Set(otherIds));
    }
    assert.deepEqual((await list({ email: 'customer1@example.com' }, other.token)).body, []);
    assert.deepEqual((await list({ q: 'customer' }, other.token)).body, []);
  });
});
