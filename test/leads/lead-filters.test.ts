import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../src/shared/ids.js';
import { assertEachOnce, ids, walk } from '../helpers/list-walk.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { insertLeads } from './lead-bulk.js';
import { assertFieldError } from './lead-fixtures.js';

const LEADS = `${API}/leads`;

/** Rows built to tell a right filter from a near miss: wildcards, cases, substrings in each field. */
const FIXTURES = [
  { name: 'Plan 100% Off', email: 'pct@example.com', phone: null, source: 'form', status: 'new', score: 0 },
  { name: 'Plan 1000 Off', email: 'thousand@example.com', phone: null, source: 'partner', status: 'won', score: 100 },
  { name: 'under_score', email: null, phone: '+55 11 98765-4321', source: 'web form', status: 'qualified', score: 50 },
  { name: 'underXscore', email: 'ux@example.org', phone: null, source: 'form', status: 'lost', score: 49 },
  { name: 'Back\\slash', email: 'back@example.com', phone: null, source: null, status: 'new', score: 51 },
  {
    name: 'MARIA Souza',
    email: 'maria.souza@empresa.com.br',
    phone: '11 5555-0000',
    source: 'ads',
    status: 'contacted',
    score: 10,
  },
  { name: 'Joana', email: 'joana@example.com', phone: null, source: 'forms', status: 'proposal', score: 90 },
  { name: 'Zé', email: 'ze+tag@example.com', phone: null, source: 'ads', status: 'negotiation', score: 75 },
  { name: 'Blacksmith', email: null, phone: '123', source: 'Form', status: 'new', score: 100 },
] as const;
type Fixture = (typeof FIXTURES)[number];

/** Fixture k was created at 2026-03-01 + k hours and updated at 2026-04-01 + k hours. */
const createdAt = (k: number) => new Date(Date.UTC(2026, 2, 1, k)).toISOString();
const updatedAt = (k: number) => new Date(Date.UTC(2026, 3, 1, k)).toISOString();

describeEachBackend('GET /leads: filters (SPEC §6)', (ctx) => {
  let tenant: TestTenant;
  let bulk: TestTenant;
  const byName = new Map<string, string>();
  const list = (query: Record<string, string>, token = tenant.token) => ctx.request('GET', LEADS, { token, query });
  /** The names a filter returns, in the default order (newest first). */
  const names = async (query: Record<string, string>) => {
    const res = await list({ limit: '1000', ...query });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.map((item: { name: string }) => item.name);
  };
  /** The fixtures that pass `keep`, newest first. */
  const expected = (keep: (fixture: Fixture, k: number) => boolean) =>
    FIXTURES.flatMap((fixture, k) => (keep(fixture, k) ? [fixture.name] : [])).reverse();

  before(async () => {
    tenant = await ctx.tenant('Filtered');
    bulk = await ctx.tenant('Bulk');
    await insertLeads(ctx, bulk, 263);
    const rows = FIXTURES.map((fixture, k) => ({
      ...fixture,
      id: newId(),
      tenantId: tenant.id,
      createdBy: tenant.tokenId,
      updatedAt: new Date(updatedAt(k)),
    }));
    await ctx.db.insertInto('leads').values(rows).execute();
    for (const [k, row] of rows.entries()) {
      byName.set(row.name, row.id);
      await sql`update leads set created_at = ${createdAt(k)}::timestamptz where id = ${row.id}`.execute(ctx.db);
    }
  });

  it('filters by status, a comma list of allowed statuses (SPEC §6)', async () => {
    assert.deepEqual(
      await names({ status: 'new' }),
      expected((f) => f.status === 'new'),
    );
    assert.deepEqual(
      await names({ status: 'new,won' }),
      expected((f) => f.status === 'new' || f.status === 'won'),
    );
    assert.deepEqual(
      await names({ status: 'won, lost ,won' }),
      expected((f) => ['won', 'lost'].includes(f.status)),
    );
  });

  it('rejects a status outside the allowed list, or an empty one, with a 400 naming `status` (SPEC §6)', async () => {
    for (const status of ['bogus', 'new,bogus', '', ',', 'new,']) {
      assertFieldError(await list({ status }), 'status');
    }
  });

  it('filters by source, exactly (SPEC §6)', async () => {
    assert.deepEqual(
      await names({ source: 'form' }),
      expected((f) => f.source === 'form'),
    );
    assert.deepEqual(await names({ source: 'ads' }), ['Zé', 'MARIA Souza']);
    assert.deepEqual(await names({ source: 'orm' }), []);
  });

  it('filters by e-mail, exact and case-insensitive (SPEC §6)', async () => {
    assert.deepEqual(await names({ email: 'PCT@Example.COM' }), ['Plan 100% Off']);
    assert.deepEqual(await names({ email: ' ze+tag@example.com ' }), ['Zé']);
    assert.deepEqual(await names({ email: 'example.com' }), []);
    assert.deepEqual(await names({ email: 'pct@example.co' }), []);
  });

  it('searches q as a case-insensitive substring of name, e-mail or phone (SPEC §6)', async () => {
    assert.deepEqual(await names({ q: 'plan' }), ['Plan 1000 Off', 'Plan 100% Off']);
    assert.deepEqual(await names({ q: 'maria' }), ['MARIA Souza']);
    assert.deepEqual(await names({ q: 'EMPRESA.COM' }), ['MARIA Souza'], 'by e-mail');
    assert.deepEqual(await names({ q: '98765' }), ['under_score'], 'by phone');
    assert.deepEqual(await names({ q: '5555-0000' }), ['MARIA Souza'], 'by phone');
    assert.deepEqual(await names({ q: 'nobody' }), []);
    // One column holds the substring, or none does: the end of the name and the start of the
    // e-mail together are no match, though one index holds all three columns side by side.
    assert.deepEqual(await names({ q: 'ouza maria' }), []);
    assert.deepEqual(await names({ q: 'souza maria.souza' }), []);
    assert.deepEqual(await names({ q: 'ria sou' }), ['MARIA Souza']);
    // The character that joins them in the index is text like any other in q: no column holds it.
    assert.deepEqual(await names({ q: 'ouza\u001fmaria' }), []);
    assert.deepEqual(await names({ q: 'Souza\u001f' }), []);
  });

  it('takes %, _ and \\ in q literally, not as LIKE wildcards (SPEC §6)', async () => {
    assert.deepEqual(await names({ q: '100%' }), ['Plan 100% Off']);
    assert.deepEqual(await names({ q: '00%' }), ['Plan 100% Off']);
    assert.deepEqual(await names({ q: 'r_s' }), ['under_score']);
    assert.deepEqual(await names({ q: 'er_' }), ['under_score']);
    assert.deepEqual(await names({ q: 'k\\s' }), ['Back\\slash']);
    assert.deepEqual(await names({ q: '+tag' }), ['Zé']);
  });

  it('rejects a q shorter than 3 characters (what a trigram index serves) or too long, with a 400 naming `q` (SPEC §6)', async () => {
    for (const q of ['', '   ', 'a', 'ab', ' ab ', 'x'.repeat(201)]) assertFieldError(await list({ q }), 'q');
    assert.deepEqual(await names({ q: ' pla ' }), ['Plan 1000 Off', 'Plan 100% Off'], 'trimmed, then 3 characters');
  });

  it('filters by updatedSince and createdSince, inclusive (SPEC §6)', async () => {
    assert.deepEqual(
      await names({ updatedSince: updatedAt(6) }),
      expected((_, k) => k >= 6),
    );
    assert.deepEqual(
      await names({ createdSince: createdAt(3) }),
      expected((_, k) => k >= 3),
    );
    // The same instant in another offset, and one millisecond later.
    assert.deepEqual(
      await names({ updatedSince: '2026-04-01T09:00:00+03:00' }),
      expected((_, k) => k >= 6),
    );
    assert.deepEqual(
      await names({ createdSince: '2026-03-01T03:00:00.001Z' }),
      expected((_, k) => k >= 4),
    );
    assert.deepEqual(
      await names({ createdSince: createdAt(2), updatedSince: updatedAt(5) }),
      expected((_, k) => k >= 5),
    );
    assert.deepEqual(await names({ updatedSince: '2030-01-01T00:00:00Z' }), []);
  });

  it('walks sort=updatedAt from updatedSince and sort=createdAt from createdSince, both ways, inclusive, page by page (SPEC §6)', async () => {
    // A bound on the sort's own time is read as a range of the sort's index (a prepared statement
    // of its own): the same rows as any other filter, in the sort's order.
    const oldestFirst = (keep: (fixture: Fixture, k: number) => boolean) => expected(keep).reverse();
    assert.deepEqual(
      await names({ sort: 'updatedAt', updatedSince: updatedAt(6) }),
      oldestFirst((_, k) => k >= 6),
    );
    assert.deepEqual(
      await names({ sort: '-updatedAt', updatedSince: '2026-04-01T09:00:00+03:00' }),
      expected((_, k) => k >= 6),
    );
    assert.deepEqual(
      await names({ sort: 'createdAt', createdSince: '2026-03-01T03:00:00.001Z' }),
      oldestFirst((_, k) => k >= 4),
    );
    assert.deepEqual(await names({ sort: 'updatedAt', updatedSince: '2030-01-01T00:00:00Z' }), []);
    const query = { sort: 'updatedAt', updatedSince: updatedAt(2), limit: '2' };
    const walked = await walk(ctx, tenant.token, LEADS, query, 'cursor');
    assert.deepEqual(
      walked.items.map((item) => item.name),
      oldestFirst((_, k) => k >= 2),
    );
    assert.deepEqual(walked.pageSizes, [2, 2, 2, 1]);
  });

  it('rejects a malformed updatedSince or createdSince with a 400 naming it (SPEC §6)', async () => {
    for (const field of ['updatedSince', 'createdSince']) {
      for (const value of [
        'yesterday',
        '2026-03-01',
        '2026-02-30T00:00:00Z',
        '2026-12-31T23:59:60Z',
        '2026-03-01T25:00:00Z',
        '1709251200000',
        '',
      ]) {
        assertFieldError(await list({ [field]: value }), field);
      }
    }
  });

  it('filters by scoreMin and scoreMax, inclusive (SPEC §6)', async () => {
    assert.deepEqual(
      await names({ scoreMin: '50' }),
      expected((f) => f.score >= 50),
    );
    assert.deepEqual(
      await names({ scoreMax: '50' }),
      expected((f) => f.score <= 50),
    );
    assert.deepEqual(await names({ scoreMin: '50', scoreMax: '50' }), ['under_score']);
    assert.deepEqual(
      await names({ scoreMin: '0', scoreMax: '100' }),
      expected(() => true),
    );
    assert.deepEqual(await names({ scoreMin: '100' }), ['Blacksmith', 'Plan 1000 Off']);
  });

  it('rejects a score bound outside 0–100 or not an integer with a 400 naming it (SPEC §6)', async () => {
    for (const field of ['scoreMin', 'scoreMax']) {
      for (const value of ['-1', '101', 'abc', '1.5', '']) {
        assertFieldError(await list({ [field]: value }), field);
      }
    }
  });

  it('rejects scoreMin above scoreMax with a 400 naming the bounds (SPEC §6)', async () => {
    const res = await list({ scoreMin: '60', scoreMax: '40' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'validation_failed');
    assert.ok(['scoreMin', 'scoreMax'].includes(res.body.details?.[0]?.field), JSON.stringify(res.body));
  });

  it('combines filters: every one must hold (SPEC §6)', async () => {
    assert.deepEqual(await names({ status: 'new', scoreMin: '1' }), ['Blacksmith', 'Back\\slash']);
    assert.deepEqual(await names({ q: 'plan', status: 'won' }), ['Plan 1000 Off']);
    assert.deepEqual(await names({ source: 'form', scoreMax: '0', q: 'off' }), ['Plan 100% Off']);
    assert.deepEqual(await names({ email: 'pct@example.com', status: 'won' }), []);
  });

  it('pages through a filtered list by Link and by cursor: every matching row once, in order (SPEC §6)', async () => {
    const filters = { status: 'new,won,qualified', scoreMin: '20', scoreMax: '80', q: 'example' };
    const match = await sql<{ id: string }>`select id from leads where tenant_id = ${bulk.id}
      and status in ('new', 'won', 'qualified') and score between 20 and 80
      and (name ilike '%example%' or email ilike '%example%' or phone ilike '%example%')
      order by score desc, id desc`.execute(ctx.db);
    assert.ok(match.rows.length > 20, `only ${match.rows.length} rows match`);
    for (const follow of ['link', 'cursor'] as const) {
      const walked = await walk(ctx, bulk.token, LEADS, { ...filters, sort: '-score', limit: '9' }, follow);
      assertEachOnce(walked.items);
      assert.deepEqual(
        ids(walked.items),
        match.rows.map((row) => row.id),
      );
      assert.ok(walked.pageSizes.length > 2);
    }
  });

  it('rejects an unknown query parameter with a 400 naming it (SPEC §6)', async () => {
    for (const name of ['bogus', 'type', 'Status', 'offset', 'page', 'sort_by', 'scoremin']) {
      assertFieldError(await list({ [name]: '1' }), name);
    }
  });

  it('rejects a sort that is not documented with a 400 naming `sort` (SPEC §6)', async () => {
    for (const sort of ['phone', 'notes', '+name', '--name', 'Name', 'score,name', '']) {
      assertFieldError(await list({ sort }), 'sort');
    }
  });

  it('never filters another tenant in: the fixtures of one tenant are invisible to another (SPEC §5.3)', async () => {
    const queries: Record<string, string>[] = [
      { q: 'plan' },
      { email: 'pct@example.com' },
      { source: 'form' },
      { scoreMin: '0' },
    ];
    for (const query of queries) {
      const res = await list({ limit: '1000', ...query }, bulk.token);
      assert.equal(res.status, 200);
      for (const item of res.body) assert.ok(![...byName.values()].includes(item._id));
    }
  });
});
