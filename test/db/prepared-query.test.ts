import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { PreparedByShape, PreparedQuery } from '../../src/db/prepared-query.js';
import { API, describeEachBackend } from '../helpers/test-app.js';

describeEachBackend('statements compiled once, run with new values (src/db/prepared-query.ts)', (ctx) => {
  it('binds each run its own values, by name, constants kept', async () => {
    const tenants = new PreparedQuery((p: { id: string; name: string }) =>
      ctx.db
        .selectFrom('tenants')
        .select(['id', 'name'])
        .where('id', '=', p.id)
        .where('name', '=', p.name)
        .where('active', '=', true),
    );
    const a = await ctx.tenant('Alpha');
    const b = await ctx.tenant('Beta');
    assert.deepEqual(await tenants.first(ctx.db, { id: a.id, name: 'Alpha' }), { id: a.id, name: 'Alpha' });
    assert.deepEqual(await tenants.first(ctx.db, { id: b.id, name: 'Beta' }), { id: b.id, name: 'Beta' });
    assert.equal(await tenants.first(ctx.db, { id: a.id, name: 'Beta' }), undefined);
  });

  it('runs inside the transaction it is given, and rolls back with it', async () => {
    const rename = new PreparedQuery((p: { id: string; name: string }) =>
      ctx.db.updateTable('tenants').set({ name: p.name }).where('id', '=', p.id).returning('name'),
    );
    const tenant = await ctx.tenant('Before');
    const seenInside = await ctx.db
      .transaction()
      .execute(async (trx) => {
        const row = await rename.first(trx, { id: tenant.id, name: 'Inside' });
        throw Object.assign(new Error('roll back'), { row });
      })
      .catch((error: { row?: { name: string } }) => error.row);
    assert.deepEqual(seenInside, { name: 'Inside' });
    const after = await ctx.db.selectFrom('tenants').select('name').where('id', '=', tenant.id).executeTakeFirst();
    assert.deepEqual(after, { name: 'Before' });
    assert.deepEqual(await rename.first(ctx.db, { id: tenant.id, name: 'Outside' }), { name: 'Outside' });
  });

  it('is parsed and planned once per connection by the database (a named statement)', async () => {
    const build = (p: { id: string }) => ctx.db.selectFrom('tenants').select('name').where('id', '=', p.id).limit(1);
    const byId = new PreparedQuery(build);
    const text = build({ id: '' }).compile().sql;
    const tenant = await ctx.tenant('Named');
    // One transaction: one connection, whose own prepared statements the view lists.
    const prepared = await ctx.db.transaction().execute(async (trx) => {
      for (let run = 0; run < 3; run++) assert.deepEqual(await byId.first(trx, { id: tenant.id }), { name: 'Named' });
      const { rows } = await sql<{
        name: string;
      }>`select name from pg_prepared_statements where statement = ${text}`.execute(trx);
      return rows;
    });
    assert.equal(prepared.length, 1, 'one named statement for three runs');
    assert.match(prepared[0]?.name ?? '', /^funil_[0-9a-f]{24}$/);
  });

  it('refuses at once a placeholder that would not become a parameter of its own', () => {
    // Branching on a value: the placeholder is an object, always truthy, and the statement would
    // silently never depend on it.
    assert.throws(
      () =>
        new PreparedQuery((p: { id: string; onlyActive: boolean }) => {
          const query = ctx.db.selectFrom('tenants').select('id').where('id', '=', p.id);
          return p.onlyActive ? query.where('active', '=', true) : query;
        }),
      /onlyActive did not become parameters/,
    );
  });

  it("gives its rows the camel-case plugin's names, nested keys untouched, and keeps the SQL's when asked", async () => {
    const tenant = await ctx.tenant('Names');
    const created = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: { name: 'Ana', email: 'ana@example.com', externalId: 'crm-1' },
    });
    assert.equal(created.status, 201);
    const id = (created.body as { _id: string })._id;
    const build = (p: { id: string }) =>
      ctx.db
        .selectFrom('leads')
        .select(['id', 'tenantId', 'externalId', 'createdAt', 'lastContact'])
        .select(sql<object>`'{"f_text": "kept", "nested_key": {"inner_key": 1}}'::jsonb`.as('customValues'))
        .where('id', '=', p.id);
    // What Kysely gives the same statement through the plugin.
    const expected = await build({ id }).executeTakeFirstOrThrow();
    assert.deepEqual(Object.keys(expected), [
      'id',
      'tenantId',
      'externalId',
      'createdAt',
      'lastContact',
      'customValues',
    ]);
    assert.deepEqual(expected.customValues, { f_text: 'kept', nested_key: { inner_key: 1 } });
    assert.ok(expected.createdAt instanceof Date);
    const renamed = new PreparedQuery(build);
    for (let run = 0; run < 2; run++) assert.deepEqual(await renamed.first(ctx.db, { id }), expected);
    const inTransaction = await ctx.db.transaction().execute((trx) => renamed.first(trx, { id }));
    assert.deepEqual(inTransaction, expected);

    const asSelected = new PreparedQuery(build, { keepColumnNames: true });
    const row = (await asSelected.first(ctx.db, { id })) as Record<string, unknown> | undefined;
    assert.deepEqual(Object.keys(row ?? {}), [
      'id',
      'tenant_id',
      'external_id',
      'created_at',
      'last_contact',
      'custom_values',
    ]);
    assert.equal(row?.tenant_id, tenant.id);
  });

  it('prepares one statement per shape, each with its own text', async () => {
    const built: string[] = [];
    const byShape = new PreparedByShape<boolean, { id: string }, { id: string }>(String, (active, p) => {
      const query = ctx.db.selectFrom('tenants').select('id').where('id', '=', p.id);
      const shaped = active ? query.where('active', '=', true) : query;
      built.push(shaped.compile().sql);
      return shaped;
    });
    assert.equal(byShape.for(true), byShape.for(true));
    assert.notEqual(byShape.for(true), byShape.for(false));
    assert.equal(built.length, 2);
    assert.notEqual(built[0], built[1]);
  });
});
