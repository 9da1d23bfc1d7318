import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { appSecret } from '../../src/db/app-secrets.js';
import { leadSchemas } from '../../src/leads/lead.schemas.js';
import { CursorCodec, cursorBinding } from '../../src/records/cursor.js';
import { assertEachOnce, flipChar, ids, walk } from '../helpers/list-walk.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { expectedLeadOrder, insertLeads, LEAD_SORT_SQL, type LeadSort } from './lead-bulk.js';
import { assertFieldError, LIST_ITEM_KEYS } from './lead-fixtures.js';

const LEADS = `${API}/leads`;
const ROWS = 263;
const LIMIT = 37;
const SORTS = Object.keys(LEAD_SORT_SQL).flatMap((field) => [field, `-${field}`]);

interface SortableRow {
  id: string;
  createdAt: Date;
  updatedAt: Date;
  score: number;
  lastContact: Date | null;
}

/** A sort value computed in JavaScript, for the sorts whose order does not depend on a collation. */
function jsSortValue(row: SortableRow, field: Exclude<LeadSort, 'name'>): number {
  switch (field) {
    case 'createdAt':
      return row.createdAt.getTime();
    case 'updatedAt':
      return row.updatedAt.getTime();
    case 'score':
      return row.score;
    case 'lastContact':
      return row.lastContact?.getTime() ?? Number.NEGATIVE_INFINITY;
  }
}

describeEachBackend('GET /leads: keyset paging and cursors (SPEC §6)', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;
  let otherIds: string[];
  const list = (query: Record<string, string>, token = tenant.token) => ctx.request('GET', LEADS, { token, query });
  const firstCursor = async (query: Record<string, string>) => {
    const res = await list({ limit: '5', ...query });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const cursor = res.headers['x-next-cursor'];
    assert.equal(typeof cursor, 'string', 'the first page should have a successor');
    return String(cursor);
  };

  before(async () => {
    tenant = await ctx.tenant('Paged');
    other = await ctx.tenant('Other');
    await insertLeads(ctx, tenant, ROWS);
    // The same sort values in another tenant: its rows sit between ours in every index.
    otherIds = await insertLeads(ctx, other, 40, 'other');
  });

  for (const sort of SORTS) {
    it(`walks sort=${sort} in pages of ${LIMIT}, by Link and by X-Next-Cursor: every row once, in ORDER BY order (SPEC §6)`, async () => {
      const expected = await expectedLeadOrder(ctx, tenant.id, sort);
      assert.equal(expected.length, ROWS);
      for (const follow of ['link', 'cursor'] as const) {
        const walked = await walk(ctx, tenant.token, LEADS, { sort, limit: String(LIMIT) }, follow);
        assertEachOnce(walked.items);
        assert.deepEqual(ids(walked.items), expected, `sort=${sort} followed by ${follow}`);
        assert.deepEqual(walked.pageSizes, [37, 37, 37, 37, 37, 37, 37, 4]);
      }
      const onePage = await list({ sort, limit: '1000' });
      assert.deepEqual(ids(onePage.body), expected);
      assert.equal(onePage.headers.link, undefined);
      assert.equal(onePage.headers['x-next-cursor'], undefined);
    });
  }

  it('orders by the documented expressions: ties by id, a never-contacted lead first ascending and last descending (SPEC §6)', async () => {
    const rows: SortableRow[] = await ctx.db
      .selectFrom('leads')
      .select(['id', 'createdAt', 'updatedAt', 'score', 'lastContact'])
      .where('tenantId', '=', tenant.id)
      .execute();
    for (const field of ['createdAt', 'updatedAt', 'score', 'lastContact'] as const) {
      const ascending = [...rows].sort(
        (a, b) => jsSortValue(a, field) - jsSortValue(b, field) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
      assert.deepEqual(await expectedLeadOrder(ctx, tenant.id, field), ids(ascending.map((r) => ({ _id: r.id }))));
      const descending = [...ascending].reverse();
      assert.deepEqual(
        await expectedLeadOrder(ctx, tenant.id, `-${field}`),
        ids(descending.map((r) => ({ _id: r.id }))),
      );
    }
    const neverContacted = rows.filter((row) => row.lastContact === null).map((row) => row.id);
    const ascending = await expectedLeadOrder(ctx, tenant.id, 'lastContact');
    assert.deepEqual(new Set(ascending.slice(0, neverContacted.length)), new Set(neverContacted));
  });

  it('ends some page inside a run of equal sort values for every sort, so the id tie-breaker is exercised', async () => {
    const rows = await ctx.db.selectFrom('leads').selectAll().where('tenantId', '=', tenant.id).execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    const sortValue: Record<LeadSort, (row: (typeof rows)[number]) => string> = {
      createdAt: (row) => row.createdAt.toISOString(),
      updatedAt: (row) => row.updatedAt.toISOString(),
      name: (row) => row.name,
      score: (row) => String(row.score),
      lastContact: (row) => row.lastContact?.toISOString() ?? 'never',
    };
    for (const field of Object.keys(LEAD_SORT_SQL) as LeadSort[]) {
      const values = (await expectedLeadOrder(ctx, tenant.id, field)).map((id) =>
        sortValue[field](byId.get(id) as never),
      );
      let splits = 0;
      for (let end = LIMIT; end < values.length; end += LIMIT) {
        if (values[end - 1] === values[end]) splits++;
      }
      assert.ok(splits > 0, `no page boundary of sort=${field} falls inside a run of equal values`);
    }
  });

  it('reads the right rows at every page size, first page and next, past the shapes a store prepares (issue 21)', async () => {
    // Each size is a statement of its own, prepared for a store's first 32 shapes and compiled at each
    // page after them: both must answer the same.
    const expected = await expectedLeadOrder(ctx, tenant.id, '-createdAt');
    for (let limit = 1; limit <= 80; limit++) {
      const first = await list({ limit: String(limit) });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(ids(first.body), expected.slice(0, limit), `limit=${limit}`);
      const next = await list({ limit: String(limit), cursor: String(first.headers['x-next-cursor']) });
      assert.deepEqual(ids(next.body), expected.slice(limit, 2 * limit), `limit=${limit}, second page`);
    }
  });

  it('pages newest first when no sort is given: the default is -createdAt (SPEC §6)', async () => {
    const walked = await walk(ctx, tenant.token, LEADS, { limit: String(LIMIT) }, 'link');
    assert.deepEqual(ids(walked.items), await expectedLeadOrder(ctx, tenant.id, '-createdAt'));
  });

  it('lists exactly the nine seed fields of each lead on every page, with their stored values (seed §2.1 rule 2)', async () => {
    const walked = await walk(ctx, tenant.token, LEADS, { limit: String(LIMIT), sort: 'name' }, 'link');
    const rows = await ctx.db.selectFrom('leads').selectAll().where('tenantId', '=', tenant.id).execute();
    const stored = new Map(rows.map((row) => [row.id, row]));
    for (const item of walked.items) {
      assert.deepEqual(Object.keys(item).sort(), LIST_ITEM_KEYS);
      const row = stored.get(item._id);
      assert.ok(row);
      assert.deepEqual(item, {
        _id: row.id,
        name: row.name,
        email: row.email,
        status: row.status,
        score: row.score,
        lastContact: row.lastContact?.toISOString() ?? null,
        source: row.source,
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
      });
    }
    // The documented schema has exactly those keys too (PostgreSQL writes the items: lead-list.test.ts checks them byte for byte).
    const { LeadListItem } = leadSchemas;
    assert.deepEqual(Object.keys(LeadListItem.properties).sort(), LIST_ITEM_KEYS);
    assert.equal((LeadListItem as { additionalProperties?: unknown }).additionalProperties, false);
  });

  it('continues a walk with the same cursor under another limit (the cursor binds sort and filters, not the page size)', async () => {
    const cursor = await firstCursor({ sort: 'score' });
    const res = await list({ sort: 'score', cursor, limit: '3' });
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body), (await expectedLeadOrder(ctx, tenant.id, 'score')).slice(5, 8));
  });

  it('refuses a cursor with any single character changed: 400 naming `cursor`, never another page (SPEC §6)', async () => {
    const cursor = await firstCursor({ sort: 'name' });
    for (let index = 0; index < cursor.length; index++) {
      const forged = flipChar(cursor, index);
      assert.notEqual(forged, cursor);
      assertFieldError(await list({ sort: 'name', cursor: forged }), 'cursor');
    }
  });

  it('refuses truncated, extended and garbage cursors with a 400 naming `cursor` (SPEC §6)', async () => {
    const cursor = await firstCursor({ sort: 'lastContact' });
    const [payload, mac] = cursor.split('.') as [string, string];
    const bad = [
      cursor.slice(0, -1),
      cursor.slice(0, cursor.length / 2),
      payload,
      `${payload}.`,
      `.${mac}`,
      `${cursor}A`,
      `${cursor}=`,
      `${cursor}==`,
      `${payload}.${mac.slice(0, 5)}!${mac.slice(5)}`,
      `${cursor}.${mac}`,
      `${mac}.${payload}`,
      'abc',
      'null',
      '.',
      '..',
      '{}',
      'a'.repeat(2000),
      `${Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', otherIds[0]])).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`,
      '%00',
      'ção.ção',
    ];
    for (const forged of bad) {
      assertFieldError(await list({ sort: 'lastContact', cursor: forged }), 'cursor');
    }
    assertFieldError(await list({ sort: 'lastContact', cursor: '' }), 'cursor');
    assertFieldError(await list({ sort: 'lastContact', cursor: 'a'.repeat(2001) }), 'cursor');
  });

  it('refuses a cursor replayed with another sort (SPEC §6)', async () => {
    for (const sort of SORTS) {
      const cursor = await firstCursor({ sort });
      for (const otherSort of SORTS.filter((s) => s !== sort)) {
        assertFieldError(await list({ sort: otherSort, cursor }), 'cursor');
      }
    }
    const byDefault = await firstCursor({});
    assertFieldError(await list({ sort: 'createdAt', cursor: byDefault }), 'cursor');
  });

  it('refuses a cursor replayed with other filters (SPEC §6)', async () => {
    const filtered = { status: 'new,won', scoreMin: '10' };
    const cursor = await firstCursor(filtered);
    assert.equal((await list({ ...filtered, cursor })).status, 200);
    const changes: Record<string, string>[] = [
      {},
      { status: 'new' },
      { status: 'new,won' },
      { status: 'new,won,lost', scoreMin: '10' },
      { status: 'new,won', scoreMin: '20' },
      { status: 'new,won', scoreMin: '10', scoreMax: '100' },
      { status: 'new,won', scoreMin: '10', q: 'ead' },
      { status: 'new,won', scoreMin: '10', source: 'form' },
      { status: 'new,won', scoreMin: '10', email: 'lead1@example.com' },
      { status: 'new,won', scoreMin: '10', updatedSince: '2020-01-01T00:00:00Z' },
      { status: 'new,won', scoreMin: '10', createdSince: '2020-01-01T00:00:00Z' },
    ];
    for (const changed of changes) {
      assertFieldError(await list({ ...changed, cursor }), 'cursor');
    }
  });

  it('refuses a correctly signed cursor whose position does not fit its sort with a 400, not a 500', async () => {
    // Only the service can sign; this stands for a cursor minted by another version of it.
    const codec = new CursorCodec(() => appSecret(ctx.db, 'list-cursor-key'));
    const someId = (await expectedLeadOrder(ctx, tenant.id, 'score'))[0] as string;
    const forged: [string, string | number | null, string][] = [
      ['score', 'ten', someId],
      ['score', 1.5, someId],
      ['score', 2 ** 40, someId],
      ['score', null, someId],
      ['score', 10, 'not-a-uuid'],
      ['name', 5, someId],
      ['name', 'a\u0000b', someId],
      ['createdAt', 5, someId],
      ['createdAt', 'yesterday', someId],
      ['createdAt', '2026', someId],
      ['createdAt', '2026-02-30T00:00:00.000Z', someId],
      ['-updatedAt', '+010000-01-01T00:00:00.000Z', someId],
      ['-lastContact', null, someId],
    ];
    for (const [sort, value, id] of forged) {
      const cursor = await codec.encode({ value, id }, cursorBinding(tenant.id, sort, {}));
      assertFieldError(await list({ sort, cursor }), 'cursor');
    }
    // The same codec's well-formed positions are accepted: the refusals above are about the values.
    const fine = await codec.encode({ value: '-infinity', id: someId }, cursorBinding(tenant.id, 'lastContact', {}));
    assert.equal((await list({ sort: 'lastContact', cursor: fine })).status, 200);
  });

  it("refuses tenant A's cursor to tenant B and never shows B a row of A (SPEC §5.3, §6)", async () => {
    for (const sort of SORTS) {
      const cursor = await firstCursor({ sort });
      const res = await list({ sort, cursor }, other.token);
      assertFieldError(res, 'cursor');
      assert.doesNotMatch(JSON.stringify(res.body), /lead\d+@example\.com/);
      const walked = await walk(ctx, other.token, LEADS, { sort, limit: '7' }, 'link');
      assert.deepEqual(ids(walked.items), await expectedLeadOrder(ctx, other.id, sort));
      assert.deepEqual(new Set(ids(walked.items)), new Set(otherIds));
    }
    const mine = await list({ email: 'lead1@example.com' });
    assert.equal(mine.body.length, 1);
    assert.deepEqual((await list({ email: 'lead1@example.com' }, other.token)).body, []);
    assert.deepEqual((await list({ q: 'lead1' }, other.token)).body, []);
  });
});
