import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { assertError, assertForbidden } from '../helpers/assert-error.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const MARCH = 'createdSince=2025-03-01T00:00:00Z&createdUntil=2025-03-04T00:00:00Z';

describeEachBackend('GET /leads/summary (SPEC §18)', (ctx) => {
  let tenant: TestTenant;

  /** `count` leads of `owner` created at `at`, with this status and source. */
  async function leads(owner: TestTenant, count: number, at: string, status: string, source: string | null) {
    await sql`
      insert into leads (id, tenant_id, name, phone, status, source, created_by, created_at, updated_at)
      select gen_random_uuid(), ${owner.id}, 'Lead', '1', ${status}, ${source}, ${owner.tokenId}, ${at}::timestamptz, ${at}::timestamptz
      from generate_series(1, ${count})`.execute(ctx.db);
  }

  const summary = (query: string, token = tenant.token) =>
    ctx.request('GET', `${API}/leads/summary${query ? `?${query}` : ''}`, { token });

  before(async () => {
    tenant = await ctx.tenant();
    await leads(tenant, 3, '2025-03-01T10:00:00Z', 'new', 'ads');
    await leads(tenant, 1, '2025-03-02T23:59:59.999Z', 'won', null);
    await leads(tenant, 2, '2025-03-03T00:00:00Z', 'qualified', 'form');
    await leads(tenant, 1, '2025-02-28T23:59:59.999Z', 'lost', 'ads');
    await leads(tenant, 1, '2025-03-04T00:00:00Z', 'lost', 'ads');
    // Another tenant's leads in the same period are never counted.
    const other = await ctx.tenant();
    await leads(other, 5, '2025-03-02T12:00:00Z', 'new', 'ads');
  });

  it('counts the period by status (pipeline order, zeros), by source (largest first, null) and per UTC day', async () => {
    const answer = await summary(MARCH);
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body, {
      total: 6,
      pipeline: tenant.id,
      byStatus: [
        { status: 'new', kind: 'open', count: 3 },
        { status: 'contacted', kind: 'open', count: 0 },
        { status: 'qualified', kind: 'open', count: 2 },
        { status: 'proposal', kind: 'open', count: 0 },
        { status: 'negotiation', kind: 'open', count: 0 },
        { status: 'won', kind: 'won', count: 1 },
        { status: 'lost', kind: 'lost', count: 0 },
      ],
      bySource: [
        { source: 'ads', count: 3 },
        { source: 'form', count: 2 },
        { source: null, count: 1 },
      ],
      perDay: [
        { date: '2025-03-01', count: 3 },
        { date: '2025-03-02', count: 1 },
        { date: '2025-03-03', count: 2 },
      ],
      createdSince: '2025-03-01T00:00:00.000Z',
      createdUntil: '2025-03-04T00:00:00.000Z',
    });
  });

  it('filters by source; createdSince is inclusive, createdUntil exclusive, any zone', async () => {
    const ads = await summary(`${MARCH}&source=ads`);
    assert.equal(ads.body.total, 3);
    assert.deepEqual(
      ads.body.perDay.map((day: { count: number }) => day.count),
      [3, 0, 0],
    );
    assert.deepEqual(ads.body.bySource, [{ source: 'ads', count: 3 }]);
    const edges = await summary('createdSince=2025-02-28T23:59:59.999Z&createdUntil=2025-03-03T00:00:00.000Z');
    assert.equal(edges.body.total, 5);
    assert.deepEqual(
      edges.body.perDay.map((day: { date: string }) => day.date),
      ['2025-02-28', '2025-03-01', '2025-03-02'],
    );
    const zoned = await summary('createdSince=2025-03-02T21:00:00-03:00&createdUntil=2025-03-03T21:00:00-03:00');
    assert.equal(zoned.body.total, 2);
    assert.equal(zoned.body.createdSince, '2025-03-03T00:00:00.000Z');
  });

  it('without a period: the last 30 UTC days, today included, each of them listed', async () => {
    const created = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: { name: 'Today', phone: '1', source: 'site' },
    });
    assert.equal(created.status, 201);
    const answer = await summary('');
    assert.equal(answer.body.perDay.length, 30);
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual(answer.body.perDay.at(-1), { date: today, count: 1 });
    assert.equal(answer.body.total, 1);
    assert.deepEqual(answer.body.bySource, [{ source: 'site', count: 1 }]);
  });

  it('refuses a period that ends before it starts, spans more than 366 days, or is not a timestamp', async () => {
    const cases: [string, string][] = [
      ['createdSince=2025-03-02T00:00:00Z&createdUntil=2025-03-02T00:00:00Z', 'createdUntil'],
      ['createdSince=2025-01-01T00:00:00Z&createdUntil=2026-01-03T00:00:00Z', 'createdSince'],
      ['createdSince=yesterday', 'createdSince'],
      ['source=', 'source'],
      ['status=new', 'status'],
    ];
    for (const [query, field] of cases) {
      const answer = await summary(query);
      assertError(answer, 400, 'validation_failed', { details: true });
      assert.deepEqual(
        answer.body.details.map((detail: { field: string }) => detail.field),
        [field],
        query,
      );
    }
    const year = await summary('createdSince=2025-01-01T00:00:00Z&createdUntil=2026-01-02T00:00:00Z');
    assert.equal(year.status, 200);
    assert.equal(year.body.perDay.length, 366);
  });

  it('needs leads:read', async () => {
    const writer = await ctx.token(tenant.id, ['leads:write', 'customers:read']);
    assertForbidden(await summary(MARCH, writer.token));
    const reader = await ctx.token(tenant.id, ['leads:read']);
    assert.equal((await summary(MARCH, reader.token)).body.total, 6);
  });
});
