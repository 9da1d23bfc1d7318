import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ApiError } from '../../src/shared/errors.js';
import { describeEachBackend } from '../helpers/test-app.js';

const withCode = (code: string) => (error: unknown) => error instanceof ApiError && error.code === code;

describeEachBackend('the write path of the services, driven without HTTP (src/records/record.service.ts)', (ctx) => {
  it('writes on the transaction it is given: a lead and a customer roll back together', async () => {
    const leads = ctx.services().leads;
    const customers = ctx.services().customers;
    const tenant = await ctx.tenant('Rollback');
    const actor = { tenantId: tenant.id, tokenId: tenant.tokenId };
    const made = await ctx.db
      .transaction()
      .execute(async (trx) => {
        const lead = await leads.create(trx, actor, { name: 'Ana Lima', email: 'ana@example.com' });
        const customer = await customers.create(trx, actor, { name: 'Ana Lima', email: 'ana@example.com' });
        assert.equal((await leads.find(trx, tenant.id, lead.object._id)).object.name, 'Ana Lima');
        throw Object.assign(new Error('roll back'), { ids: [lead.object._id, customer.object._id] });
      })
      .catch((error: { ids?: string[] }) => error.ids);
    assert.equal(made?.length, 2);
    const [leadId, customerId] = made as [string, string];
    await assert.rejects(leads.find(ctx.db, tenant.id, leadId), withCode('not_found'));
    await assert.rejects(customers.find(ctx.db, tenant.id, customerId), withCode('not_found'));
  });

  it('refuses a status outside the list, whoever calls (SPEC §3), and changes nothing', async () => {
    const leads = ctx.services().leads;
    const tenant = await ctx.tenant('Statuses');
    const actor = { tenantId: tenant.id, tokenId: tenant.tokenId };
    const lead = await leads.create(ctx.db, actor, { name: 'Bia', phone: '+55 11 5555-0000' });
    await assert.rejects(
      leads.setStatus(ctx.db, actor, lead.object._id, 'archived'),
      (error) => withCode('validation_failed')(error) && (error as ApiError).details?.[0]?.field === 'status',
    );
    await assert.rejects(
      leads.create(ctx.db, actor, { name: 'Caio', phone: '1', status: 'archived' }),
      withCode('validation_failed'),
    );
    const after = await leads.find(ctx.db, tenant.id, lead.object._id);
    assert.equal(after.object.status, 'new');
    assert.equal(after.version, lead.version);
  });

  it("confines every call to the caller's tenant: another tenant's id is a 404", async () => {
    const customers = ctx.services().customers;
    const owner = await ctx.tenant('Owner');
    const other = await ctx.tenant('Other');
    const customer = await customers.create(
      ctx.db,
      { tenantId: owner.id, tokenId: owner.tokenId },
      { name: 'Dora Reis', email: 'dora@example.com' },
    );
    const intruder = { tenantId: other.id, tokenId: other.tokenId };
    const id = customer.object._id;
    for (const call of [
      () => customers.find(ctx.db, other.id, id),
      () => customers.update(ctx.db, intruder, id, { notes: 'x' }),
      () => customers.setStatus(ctx.db, intruder, id, 'blocked'),
      () => customers.delete(ctx.db, intruder, id),
    ]) {
      await assert.rejects(call(), withCode('not_found'));
    }
    assert.equal((await customers.find(ctx.db, owner.id, id)).version, customer.version);
  });
});
