import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { ADMIN_API, ADMIN_TOKEN, API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

describeEachBackend('matching keys on every write path (SPEC §21)', (ctx) => {
  let tenant: TestTenant;
  const call = (method: 'POST' | 'PUT', path: string, body: unknown, token = tenant.token) =>
    ctx.request(method, `${API}${path}`, { token, body });
  const keysOf = async (table: 'leads' | 'customers', id: string) => {
    const { rows } = await sql<{ matchEmail: string | null; matchPhone: string | null }>`
      select match_email, match_phone from ${sql.table(table)} where id = ${id}`.execute(ctx.db);
    return rows[0];
  };

  before(async () => {
    tenant = await ctx.tenant();
  });

  it('keeps them on create, update, upsert, batch and conversion, for leads and customers', async () => {
    const lead = await call('POST', '/leads', {
      name: 'Ana',
      email: 'Ana.Souza+site@GMail.com',
      phone: '(11) 98765-4321',
    });
    assert.equal(lead.status, 201, lead.text);
    assert.deepEqual(await keysOf('leads', lead.body._id), {
      matchEmail: 'anasouza@gmail.com',
      matchPhone: '+5511987654321',
    });
    await call('PUT', `/leads/${lead.body._id}`, { phone: 'call me' });
    assert.deepEqual(await keysOf('leads', lead.body._id), { matchEmail: 'anasouza@gmail.com', matchPhone: null });
    await call('PUT', `/leads/${lead.body._id}`, { email: 'ana@x.com', phone: '+55 11 3456-7890' });
    assert.deepEqual(await keysOf('leads', lead.body._id), { matchEmail: 'ana@x.com', matchPhone: '+551134567890' });

    const upserted = await call('POST', '/leads?upsert=email', {
      name: 'Bia',
      email: 'bia+x@y.com',
      phone: '11 91234-5678',
    });
    assert.deepEqual(await keysOf('leads', upserted.body._id), {
      matchEmail: 'bia@y.com',
      matchPhone: '+5511912345678',
    });
    const batch = await call('POST', '/leads/batch', {
      items: [
        { name: 'C', email: 'c+1@z.com' },
        { name: 'D', phone: '(21) 99876-5432' },
      ],
    });
    const [c, d] = batch.body.results.map((result: { data: { _id: string } }) => result.data._id);
    assert.deepEqual(await keysOf('leads', c), { matchEmail: 'c@z.com', matchPhone: null });
    assert.deepEqual(await keysOf('leads', d), { matchEmail: null, matchPhone: '+5521998765432' });

    const customer = await call('POST', '/customers', {
      name: 'Eva',
      email: 'EVA+erp@w.com',
      phone: '+1 415 555 2671',
    });
    assert.deepEqual(await keysOf('customers', customer.body._id), {
      matchEmail: 'eva@w.com',
      matchPhone: '+14155552671',
    });
    const converted = await call('POST', `/leads/${upserted.body._id}/convert`, {});
    assert.equal(converted.status, 201, converted.text);
    assert.deepEqual(await keysOf('customers', converted.body.customer._id), {
      matchEmail: 'bia@y.com',
      matchPhone: '+5511912345678',
    });
  });

  it("reads a phone without a +code in the tenant's country, as the admin set it", async () => {
    const made = await ctx.request('POST', `${ADMIN_API}/tenants`, {
      token: ADMIN_TOKEN,
      body: { name: 'Boston', phoneCountry: 'US' },
    });
    const token = (await ctx.token(made.body.id, ['leads:write', 'leads:read'])).token;
    const lead = await call('POST', '/leads', { name: 'Sam', phone: '(415) 555-2671' }, token);
    assert.deepEqual(await keysOf('leads', lead.body._id), { matchEmail: null, matchPhone: '+14155552671' });
  });

  it('gives the records of before their keys in the background: no new version, no updatedAt, no event', async () => {
    const owner = await ctx.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const made = await call(
        'POST',
        '/leads',
        { name: `Old ${i}`, email: `old${i}+x@q.com`, phone: `11 98765-000${i}` },
        owner.token,
      );
      ids.push(made.body._id);
    }
    const customer = await call('POST', '/customers', { name: 'Old', email: 'old+c@q.com' }, owner.token);
    // As the rows of before the migration are: no keys, and a backfill to do.
    await sql`update leads set match_email = null, match_phone = null where tenant_id = ${owner.id}`.execute(ctx.db);
    await sql`update customers set match_email = null, match_phone = null where tenant_id = ${owner.id}`.execute(
      ctx.db,
    );
    await sql`insert into match_key_backfills (table_name) values ('leads'), ('customers')
      on conflict (table_name) do update set after_id = null`.execute(ctx.db);
    const { rows: before } = await sql<{ id: string; version: number; updatedAt: Date }>`
      select id, version, updated_at from leads where tenant_id = ${owner.id} order by id`.execute(ctx.db);
    const { rows: eventsBefore } = await sql<{ n: number }>`
      select count(*)::int as n from events where tenant_id = ${owner.id}`.execute(ctx.db);

    await ctx.services().matchKeyBackfill.resumeAll();

    for (const [i, id] of ids.entries()) {
      assert.deepEqual(await keysOf('leads', id), { matchEmail: `old${i}@q.com`, matchPhone: `+551198765000${i}` });
    }
    assert.deepEqual(await keysOf('customers', customer.body._id), { matchEmail: 'old@q.com', matchPhone: null });
    const { rows: after } = await sql<{ id: string; version: number; updatedAt: Date }>`
      select id, version, updated_at from leads where tenant_id = ${owner.id} order by id`.execute(ctx.db);
    assert.deepEqual(after, before);
    const { rows: eventsAfter } = await sql<{ n: number }>`
      select count(*)::int as n from events where tenant_id = ${owner.id}`.execute(ctx.db);
    assert.deepEqual(eventsAfter, eventsBefore);
    const { rows: left } = await sql<{ n: number }>`select count(*)::int as n from match_key_backfills`.execute(ctx.db);
    assert.equal(left[0]?.n, 0, 'the backfill is over');
  });
});
