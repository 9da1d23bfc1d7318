import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { assertForbidden } from '../helpers/assert-error.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

/**
 * SPEC §5.6–§5.7: an answer never shows a record that the token could not have read, except the
 * one the request itself created. Found from outside: a `leads:write`-only token (the kind put in
 * a web form) read any person's lead by guessing e-mails through `?upsert=email`.
 */
describeEachBackend('scopes that reveal nothing (SPEC §5.6, §5.7)', (ctx) => {
  let tenant: TestTenant;
  let writeOnly: string;
  let readWrite: string;
  let createOnly: string;
  let customerWriteOnly: string;
  let existing: { _id: string; phone: string; name: string };

  const lead = (token: string, method: string, path: string, body?: unknown) =>
    ctx.request(method, `${API}${path}`, { token, body, headers: { 'accept-language': 'en' } });
  const stored = (id: string) =>
    ctx.db.selectFrom('leads').select(['name', 'phone']).where('id', '=', id).executeTakeFirstOrThrow();

  before(async () => {
    tenant = await ctx.tenant();
    writeOnly = (await ctx.token(tenant.id, ['leads:write'])).token;
    readWrite = (await ctx.token(tenant.id, ['leads:write', 'leads:read'])).token;
    createOnly = (await ctx.token(tenant.id, ['leads:create'])).token;
    customerWriteOnly = (await ctx.token(tenant.id, ['leads:write', 'customers:write'])).token;
    const created = await lead(tenant.token, 'POST', '/leads', {
      name: 'Ana Secreta',
      email: 'ana@example.com',
      phone: '+55 11 98888-7777',
    });
    existing = created.body;
  });

  it('refuses ?upsert= to a write-only token with 403 naming leads:read, single and batch, and changes nothing', async () => {
    const single = await lead(writeOnly, 'POST', '/leads?upsert=email', {
      name: 'Overwritten',
      email: 'ana@example.com',
    });
    assertForbidden(single);
    assert.match(single.body.error, /leads:read/);
    const batch = await lead(writeOnly, 'POST', '/leads/batch?upsert=email', {
      items: [{ name: 'Overwritten', email: 'ana@example.com' }],
    });
    assertForbidden(batch);
    assert.match(batch.body.error, /leads:read/);
    assert.deepEqual(await stored(existing._id), { name: 'Ana Secreta', phone: '+55 11 98888-7777' });
    // Even a malformed key is refused for the scope first (SPEC §2's order of checks).
    assertForbidden(await lead(writeOnly, 'POST', '/leads?upsert=nonsense', { name: 'x', phone: '1' }));
  });

  it('lets a token with leads:read beside leads:write upsert as before', async () => {
    const single = await lead(readWrite, 'POST', '/leads?upsert=email', {
      name: 'Ana Atualizada',
      email: 'ana@example.com',
    });
    assert.equal(single.status, 200);
    assert.equal(single.body._id, existing._id);
    const batch = await lead(readWrite, 'POST', '/leads/batch?upsert=email', {
      items: [{ name: 'Ana de Novo', email: 'ana@example.com' }],
    });
    assert.equal(batch.status, 200);
    assert.equal(batch.body.results[0].status, 200);
  });

  it('lets a leads:create token create a lead, answered with the lead it created, and nothing else', async () => {
    const created = await lead(createOnly, 'POST', '/leads', { name: 'From a form', email: 'form@example.com' });
    assert.equal(created.status, 201);
    assert.equal(created.body.name, 'From a form');
    const id = created.body._id as string;
    const refused = [
      await lead(createOnly, 'POST', '/leads?upsert=email', { name: 'x', email: 'ana@example.com' }),
      await lead(createOnly, 'POST', '/leads/batch', { items: [{ name: 'x', phone: '1' }] }),
      await lead(createOnly, 'GET', '/leads'),
      await lead(createOnly, 'GET', `/leads/${id}`),
      await lead(createOnly, 'PUT', `/leads/${id}`, { name: 'Changed' }),
      await lead(createOnly, 'PUT', `/leads/${id}/status`, { status: 'won' }),
      await lead(createOnly, 'DELETE', `/leads/${id}`),
      await lead(createOnly, 'POST', `/leads/${id}/convert`, {}),
      await lead(createOnly, 'GET', '/events'),
    ];
    for (const answer of refused) assertForbidden(answer);
    assert.equal((await stored(id)).name, 'From a form');
  });

  it('refuses a conversion to a token without customers:read, before anything is written', async () => {
    const target = await lead(tenant.token, 'POST', '/leads', { name: 'To convert', email: 'ana@example.com' });
    const refused = await lead(customerWriteOnly, 'POST', `/leads/${target.body._id}/convert`, {});
    assertForbidden(refused);
    assert.match(refused.body.error, /customers:read/);
    const customers = await ctx.db.selectFrom('customers').select('id').where('tenantId', '=', tenant.id).execute();
    assert.deepEqual(customers, []);
  });

  it('refuses ?upsert= on customers to a token without customers:read', async () => {
    const token = (await ctx.token(tenant.id, ['customers:write'])).token;
    const refused = await lead(token, 'POST', '/customers?upsert=email', { name: 'C', email: 'c@example.com' });
    assertForbidden(refused);
    assert.match(refused.body.error, /customers:read/);
    assertForbidden(
      await lead(token, 'POST', '/customers/batch?upsert=email', { items: [{ name: 'C', email: 'c@example.com' }] }),
    );
  });
});
