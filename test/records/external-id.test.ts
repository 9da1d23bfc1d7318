import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { unique } from '../helpers/unique.js';

/** A create body of each resource, with the fields it requires. */
const BODIES = {
  leads: (extra: Record<string, unknown>) => ({ name: 'Ana Lima', phone: '+55 11 5555-0000', ...extra }),
  customers: (extra: Record<string, unknown>) => ({ name: 'Ana Lima', email: `${unique('c')}@example.com`, ...extra }),
} as const;
const TAKEN = {
  leads: 'Já existe um lead com este externalId.',
  customers: 'Já existe um cliente com este externalId.',
} as const;

/** SPEC §13: the calling system's own id, unique per tenant and resource, filterable, clearable. */
describeEachBackend('externalId on leads and customers (SPEC §13)', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;

  before(async () => {
    tenant = await ctx.tenant('External ids');
    other = await ctx.tenant('Another tenant');
  });

  for (const resource of ['leads', 'customers'] as const) {
    const path = `${API}/${resource}`;
    const create = (token: string, extra: Record<string, unknown>) =>
      ctx.request('POST', path, { token, body: BODIES[resource](extra) });

    it(`${resource}: stores it trimmed, answers it in the full object, clears it with "" or null`, async () => {
      const externalId = unique('crm');
      const created = await create(tenant.token, { externalId: `  ${externalId}  ` });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.externalId, externalId);
      const read = await ctx.request('GET', `${path}/${created.body._id}`, { token: tenant.token });
      assert.equal(read.body.externalId, externalId);
      const none = await create(tenant.token, {});
      assert.equal(none.body.externalId, null);
      for (const cleared of ['', '   ', null]) {
        const set = await ctx.request('PUT', `${path}/${created.body._id}`, {
          token: tenant.token,
          body: { externalId: unique('again') },
        });
        assert.equal(set.status, 200);
        const res = await ctx.request('PUT', `${path}/${created.body._id}`, {
          token: tenant.token,
          body: { externalId: cleared },
        });
        assert.equal(res.status, 200, JSON.stringify(cleared));
        assert.equal(res.body.externalId, null);
      }
    });

    it(`${resource}: refuses more than 200 characters, naming the field`, async () => {
      const res = await create(tenant.token, { externalId: 'x'.repeat(201) });
      assert.equal(res.status, 400);
      assert.ok(
        res.body.details.some((detail: { field: string }) => detail.field === 'externalId'),
        JSON.stringify(res.body),
      );
      assert.equal((await create(tenant.token, { externalId: 'x'.repeat(200) })).status, 201);
    });

    it(`${resource}: a taken one is a 409 naming the holder to readers only, on create and on update`, async () => {
      const externalId = unique('taken');
      const holder = await create(tenant.token, { externalId });
      const clash = await create(tenant.token, { externalId });
      assert.equal(clash.status, 409);
      assert.deepEqual(clash.body, {
        success: false,
        error: TAKEN[resource],
        code: 'conflict',
        existingId: holder.body._id,
      });
      const second = await create(tenant.token, {});
      const update = await ctx.request('PUT', `${path}/${second.body._id}`, {
        token: tenant.token,
        body: { externalId },
      });
      assert.equal(update.status, 409);
      assert.equal(update.body.existingId, holder.body._id);
      const writeOnly = await ctx.token(tenant.id, [resource === 'leads' ? 'leads:write' : 'customers:write']);
      const blind = await create(writeOnly.token, { externalId });
      assert.equal(blind.status, 409);
      assert.equal('existingId' in blind.body, false);
      const rows = await ctx.db
        .selectFrom(resource)
        .select('id')
        .where('tenantId', '=', tenant.id)
        .where('externalId', '=', externalId)
        .execute();
      assert.equal(rows.length, 1);
    });

    it(`${resource}: is unique per tenant and per resource, not across them`, async () => {
      const externalId = unique('shared');
      assert.equal((await create(tenant.token, { externalId })).status, 201);
      assert.equal((await create(other.token, { externalId })).status, 201);
      const otherResource = resource === 'leads' ? 'customers' : 'leads';
      const res = await ctx.request('POST', `${API}/${otherResource}`, {
        token: tenant.token,
        body: BODIES[otherResource]({ externalId }),
      });
      assert.equal(res.status, 201);
    });

    it(`${resource}: filters the list by it, exactly, within the tenant`, async () => {
      const externalId = unique('filter');
      const mine = await create(tenant.token, { externalId });
      await create(other.token, { externalId });
      await create(tenant.token, { externalId: `${externalId}-not` });
      const res = await ctx.request('GET', path, { token: tenant.token, query: { externalId } });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.map((item: { _id: string }) => item._id),
        [mine.body._id],
      );
      const item = res.body[0];
      if (resource === 'customers') assert.equal(item.externalId, externalId);
      else assert.equal('externalId' in item, false, 'the lead list item stays the nine fields of SPEC §3');
      const empty = await ctx.request('GET', path, { token: tenant.token, query: { externalId: unique('none') } });
      assert.deepEqual(empty.body, []);
    });
  }
});
