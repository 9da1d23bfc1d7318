import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { exported, fileOf } from '../exports/export-fixtures.js';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { imported, type Json, NDJSON } from './import-helpers.js';

/** What a record holds that another tenant's copy of it must hold too. */
const WRITTEN = ['name', 'email', 'phone', 'source', 'status', 'score', 'notes', 'externalId', 'custom'] as const;

describeEachBackend('an export imported into another account gives the same records (SPEC §23)', (ctx) => {
  let from: TestTenant;
  let to: TestTenant;
  const fields = [
    { resource: 'lead', key: 'tools', label: 'Tools', type: 'multiselect', options: ['crm', 'erp', '=cmd'] },
    { resource: 'lead', key: 'budget', label: 'Budget', type: 'number' },
    { resource: 'lead', key: 'vip', label: 'VIP', type: 'boolean' },
  ];
  const leadsOf = async (tenant: TestTenant): Promise<Json[]> => {
    const list = await ctx.api(tenant, 'GET', '/leads?limit=1000');
    assert.equal(list.status, 200, list.text);
    const full = await Promise.all(list.body.map((item: Json) => ctx.api(tenant, 'GET', `/leads/${item._id}`)));
    return full
      .map((res) => Object.fromEntries(WRITTEN.map((key) => [key, res.body[key]])))
      .sort((a, b) => String(a.name).localeCompare(String(b.name)));
  };

  before(async () => {
    from = await ctx.tenant('From');
    to = await ctx.tenant('To');
    for (const tenant of [from, to]) {
      for (const field of fields) assert.equal((await ctx.api(tenant, 'POST', '/fields', { body: field })).status, 201);
    }
    const people = [
      { name: '=HYPERLINK("http://x")', email: 'formula@x.example', phone: '+55 11 91234-5678', notes: '-1 and @home' },
      {
        name: 'Quote "and" comma, semicolon;',
        email: 'quote@x.example',
        custom: { tools: ['crm', '=cmd'], budget: -12.5, vip: true },
      },
      { name: 'Línea\nnueva', email: 'newline@x.example', score: 77, externalId: 'ext-1', status: 'contacted' },
      { name: 'Blank', phone: '11 3333-4444', custom: { vip: false } },
    ];
    for (const body of people) assert.equal((await ctx.api(from, 'POST', '/leads', { body })).status, 201);
  });

  for (const format of ['csv', 'ndjson'] as const) {
    it(`as ${format}: every written field, formula guards and lists included`, async () => {
      const target = await ctx.tenant(`To ${format}`);
      for (const field of fields) await ctx.api(target, 'POST', '/fields', { body: field });
      const id = await exported(ctx, from, {
        resource: 'lead',
        format,
        fields: [
          'name',
          'email',
          'phone',
          'source',
          'status',
          'score',
          'notes',
          'externalId',
          'custom.tools',
          'custom.budget',
          'custom.vip',
        ],
      });
      const file = await fileOf(ctx, from.token, id);
      assert.equal(file.status, 200);
      const done = await imported(ctx, target, file.text, 'resource=lead', format === 'csv' ? 'text/csv' : NDJSON);
      assert.deepEqual({ created: done.created, failed: done.failed }, { created: 4, failed: 0 }, JSON.stringify(done));
      assert.deepEqual(await leadsOf(target), await leadsOf(from));
    });
  }

  it('an empty account stays apart: the import wrote to its own tenant only', async () => {
    assert.deepEqual(await leadsOf(to), []);
  });
});
