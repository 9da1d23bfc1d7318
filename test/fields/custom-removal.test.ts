import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { CustomValueRemoval } from '../../src/fields/custom-value-removal.js';
import { assertError } from '../helpers/assert-error.js';
import { define, fieldBody } from '../helpers/custom-fields.js';
import { feedSettled } from '../helpers/feed.js';
import { runFixture } from '../helpers/fixture-sql.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

describeEachBackend('deleting a custom field removes its values (SPEC §16)', (ctx) => {
  /** `count` leads of `tenant`, each with `custom`, written in one statement (the trigger checks them too). */
  async function leadsWith(tenant: TestTenant, count: number, custom: object): Promise<void> {
    await runFixture(ctx.db, [
      sql`
        insert into leads (id, tenant_id, name, email, status, created_by, custom, created_at)
        select gen_random_uuid(), ${tenant.id}, 'n' || i, 'n' || i || '@example.com', 'new', ${tenant.tokenId},
          ${JSON.stringify(custom)}::jsonb, now() - i * interval '1 millisecond'
        from generate_series(1, ${count}) as i`,
    ]);
  }

  async function holding(tenant: TestTenant, key: string): Promise<number> {
    const { rows } = await sql<{ count: number }>`
      select count(*)::int as count from leads where tenant_id = ${tenant.id} and custom ? ${key}`.execute(ctx.db);
    return rows[0]?.count ?? -1;
  }

  it('every record of the tenant loses the value, other keys and tenants keep theirs', async () => {
    const [tenant, other] = [await ctx.tenant(), await ctx.tenant()];
    for (const owner of [tenant, other]) {
      await define(ctx, owner, fieldBody('campaign'));
      await define(ctx, owner, fieldBody('size', { type: 'integer' }));
    }
    // More than one step of the removal (1,000 rows a step), each value stored by the trigger's rules.
    await leadsWith(tenant, 2_500, { campaign: 'bf', size: 1 });
    await leadsWith(other, 10, { campaign: 'bf', size: 1 });
    const deleted = await ctx.request('DELETE', `${API}/fields/lead/campaign`, { token: tenant.token });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { success: true });
    await waitUntil(async () => (await holding(tenant, 'campaign')) === 0);
    assert.equal(await holding(tenant, 'size'), 2_500);
    assert.equal(await holding(other, 'campaign'), 10);
    assertError(await ctx.request('GET', `${API}/fields/lead/campaign`, { token: tenant.token }), 404, 'not_found');
    // The key is free again, with another type if need be.
    await waitUntil(async () => {
      const again = await ctx.request('POST', `${API}/fields`, {
        token: tenant.token,
        body: fieldBody('campaign', { type: 'boolean' }),
      });
      return again.status === 201;
    });
    const [lead] = (await ctx.request('GET', `${API}/leads?limit=1`, { token: tenant.token })).body;
    const read = await ctx.request('GET', `${API}/leads/${lead._id}`, { token: tenant.token });
    assert.deepEqual(read.body.custom, { size: 1 });
    // Each record changed like any other (SPEC §14): a new version, a new updatedAt, an event by the deleting token.
    assert.notEqual(read.body.updatedAt, read.body.createdAt);
    assert.equal(read.headers.etag, '"2"');
    await feedSettled(ctx.db, tenant.id);
    const history = await ctx.request('GET', `${API}/events?objectId=${lead._id}`, { token: tenant.token });
    assert.deepEqual(
      history.body.map(
        (event: { type: string; actor: object; data: { changedFields: string[]; previous: object } }) => [
          event.type,
          event.actor,
          event.data.changedFields,
          event.data.previous,
        ],
      ),
      [['lead.updated', { tokenId: tenant.tokenId }, ['custom.campaign'], { 'custom.campaign': 'bf' }]],
    );
    const { rows } = await sql<{ count: number }>`
      select count(*)::int as count from events where tenant_id = ${tenant.id} and type = 'lead.updated'`.execute(
      ctx.db,
    );
    assert.equal(rows[0]?.count, 2_500);
  });

  it('a removal left half-way (a crash) finishes when removals resume; until then the key is a 409', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('legacy'));
    await leadsWith(tenant, 1_200, { legacy: 'x' });
    // What a crash right after the definition's deletion leaves: the definition gone, the removal pending.
    await sql`delete from custom_fields where tenant_id = ${tenant.id}`.execute(ctx.db);
    await sql`insert into custom_field_removals (tenant_id, resource, key) values (${tenant.id}, 'lead', 'legacy')`.execute(
      ctx.db,
    );
    // Writes of the key are refused meanwhile: no new value can slip in behind the removal.
    const [lead] = (await ctx.request('GET', `${API}/leads?limit=1`, { token: tenant.token })).body;
    const write = await ctx.request('PUT', `${API}/leads/${lead._id}`, {
      token: tenant.token,
      body: { custom: { legacy: 'y' } },
    });
    assertError(write, 400, 'validation_failed', { details: true });

    // What an instance does when it starts.
    const removal = new CustomValueRemoval(ctx.db, pino({ level: 'silent' }));
    await removal.resumeAll();
    await waitUntil(async () => (await holding(tenant, 'legacy')) === 0);
    await removal.stop();
    const { rows } = await sql`select 1 from custom_field_removals where tenant_id = ${tenant.id}`.execute(ctx.db);
    assert.equal(rows.length, 0);
    await define(ctx, tenant, fieldBody('legacy'));
  });

  it('defining a key whose former values are still being removed is a 409 until they are gone', async () => {
    const tenant = await ctx.tenant();
    await sql`insert into custom_field_removals (tenant_id, resource, key) values (${tenant.id}, 'lead', 'old')`.execute(
      ctx.db,
    );
    const blocked = await ctx.request('POST', `${API}/fields`, { token: tenant.token, body: fieldBody('old') });
    assertError(blocked, 409, 'conflict');
    assert.match(blocked.body.error, /old/);
    // The refused request set the removal going: the key is soon free.
    await waitUntil(async () => {
      const again = await ctx.request('POST', `${API}/fields`, { token: tenant.token, body: fieldBody('old') });
      return again.status === 201;
    });
  });
});

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
