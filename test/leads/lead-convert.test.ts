import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { feedSettled } from '../helpers/feed.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { uniqueEmail } from '../helpers/unique.js';

const email = () => uniqueEmail('convert');

/** SPEC §13: `POST /leads/:id/convert` turns a lead into a customer, once. */
describeEachBackend('lead conversion (SPEC §13)', (ctx) => {
  let tenant: TestTenant;
  let other: TestTenant;

  before(async () => {
    tenant = await ctx.tenant('Conversions');
    other = await ctx.tenant('Another tenant');
  });

  const createLead = async (body: Record<string, unknown>, token = tenant.token) => {
    const res = await ctx.request('POST', `${API}/leads`, { token, body: { name: 'Ana Lima', ...body } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  };
  const convert = (id: string, body?: unknown, token = tenant.token) =>
    ctx.request('POST', `${API}/leads/${id}/convert`, { token, body });
  const customersWith = (address: string) =>
    ctx.db.selectFrom('customers').select(['id', 'tenantId']).where('email', '=', address).execute();

  it('creates the customer from the lead and the body, marks the lead won and links it (201)', async () => {
    const lead = await createLead({ email: email(), phone: '+55 11 5555-0001', status: 'qualified' });
    const res = await convert(lead._id, { type: 'company', value: 1500.5, autoPayment: true, notes: 'Signed' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const { customer, created } = res.body;
    assert.equal(created, true);
    assert.equal(customer.name, 'Ana Lima');
    assert.equal(customer.firstName, 'Ana');
    assert.equal(customer.email, lead.email);
    assert.equal(customer.phone, '+55 11 5555-0001');
    assert.equal(customer.type, 'company');
    assert.equal(customer.value, 1500.5);
    assert.equal(customer.autoPayment, true);
    assert.equal(customer.notes, 'Signed');
    assert.equal(res.body.lead.status, 'won');
    assert.equal(res.body.lead.customerId, customer._id);
    const read = await ctx.request('GET', `${API}/leads/${lead._id}`, { token: tenant.token });
    assert.deepEqual(read.body, res.body.lead);
    const stored = await ctx.request('GET', `${API}/customers/${customer._id}`, { token: tenant.token });
    assert.deepEqual(stored.body, customer);
  });

  it('converting again changes nothing and answers the same customer (200, created: false)', async () => {
    const lead = await createLead({ email: email() });
    const first = await convert(lead._id);
    assert.equal(first.status, 201);
    const before = await ctx.request('GET', `${API}/leads/${lead._id}`, { token: tenant.token });
    const again = await convert(lead._id, { type: 'company' });
    assert.equal(again.status, 200);
    assert.equal(again.body.created, false);
    assert.deepEqual(again.body.customer, first.body.customer);
    const after = await ctx.request('GET', `${API}/leads/${lead._id}`, { token: tenant.token });
    assert.equal(after.headers.etag, before.headers.etag, 'the lead is not written again');
    assert.equal((await customersWith(lead.email)).length, 1);
  });

  it('links the customer that has the lead’s e-mail, unchanged (200, created: false)', async () => {
    const address = email();
    const existing = await ctx.request('POST', `${API}/customers`, {
      token: tenant.token,
      body: { name: 'Maria Souza', email: address, type: 'company' },
    });
    const lead = await createLead({ email: address.toUpperCase(), phone: '1' });
    const res = await convert(lead._id, { type: 'individual', notes: 'ignored' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.created, false);
    assert.deepEqual(res.body.customer, existing.body);
    assert.equal(res.body.lead.customerId, existing.body._id);
    assert.equal(res.body.lead.status, 'won');
  });

  it('refuses a lead without an e-mail with a 400 naming it, and writes nothing', async () => {
    const lead = await createLead({ phone: '+55 11 5555-0002' });
    const res = await convert(lead._id);
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'validation_failed');
    assert.equal(res.body.details[0].field, 'email');
    const after = await ctx.request('GET', `${API}/leads/${lead._id}`, { token: tenant.token });
    assert.deepEqual(after.body, lead);
  });

  it('ten conversions of one lead at once make one customer: one 201, nine 200', async () => {
    const lead = await createLead({ email: email() });
    const answers = await Promise.all(Array.from({ length: 10 }, () => convert(lead._id)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    assert.equal(new Set(answers.map((a) => a.body.customer._id)).size, 1);
    assert.equal((await customersWith(lead.email)).length, 1);
  });

  it('two leads with one e-mail converted at once share one customer', async () => {
    const address = email();
    const leads = [await createLead({ email: address }), await createLead({ email: address })];
    const answers = await Promise.all(leads.map((lead) => convert(lead._id)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 201]);
    assert.equal(answers[0]?.body.customer._id, answers[1]?.body.customer._id);
    assert.equal((await customersWith(address)).length, 1);
  });

  it('stays in the tenant: another tenant’s lead is a 404; its customer with the e-mail is not linked', async () => {
    const address = email();
    const theirs = await ctx.request('POST', `${API}/customers`, {
      token: other.token,
      body: { name: 'Theirs', email: address },
    });
    const lead = await createLead({ email: address });
    const notMine = await convert(lead._id, undefined, other.token);
    assert.equal(notMine.status, 404);
    const res = await convert(lead._id);
    assert.equal(res.status, 201);
    assert.notEqual(res.body.customer._id, theirs.body._id);
    const rows = await customersWith(address);
    assert.deepEqual(rows.map((row) => row.tenantId).sort(), [tenant.id, other.id].sort());
  });

  it('needs leads:write, customers:write and customers:read (it may answer an existing customer, SPEC §5.6)', async () => {
    const lead = await createLead({ email: email() });
    for (const scopes of [
      ['leads:write', 'customers:read'],
      ['customers:write', 'leads:read'],
    ] as const) {
      const { token } = await ctx.token(tenant.id, scopes);
      const res = await convert(lead._id, undefined, token);
      assert.equal(res.status, 403, scopes.join());
      assert.match(res.body.error, /(leads|customers):write/);
    }
    const writesOnly = await ctx.token(tenant.id, ['leads:write', 'customers:write']);
    const refused = await convert(lead._id, undefined, writesOnly.token);
    assert.equal(refused.status, 403);
    assert.match(refused.body.error, /customers:read/);
    const { token } = await ctx.token(tenant.id, ['leads:write', 'customers:write', 'customers:read']);
    assert.equal((await convert(lead._id, undefined, token)).status, 201);
  });

  it('checks the body as a customer’s fields: a bad one is a 400 and writes nothing', async () => {
    const lead = await createLead({ email: email() });
    for (const body of [{ type: 'alien' }, { value: 1.234 }, { name: 'Not here' }, { value: -1 }, [1]]) {
      const res = await convert(lead._id, body);
      assert.equal(res.status, 400, JSON.stringify(body));
    }
    assert.equal((await customersWith(lead.email)).length, 0);
  });

  it('a lead whose customer was deleted converts anew', async () => {
    const lead = await createLead({ email: email() });
    const first = await convert(lead._id);
    await ctx.request('DELETE', `${API}/customers/${first.body.customer._id}`, { token: tenant.token });
    const again = await convert(lead._id);
    assert.equal(again.status, 201);
    assert.notEqual(again.body.customer._id, first.body.customer._id);
    assert.equal(again.body.lead.customerId, again.body.customer._id);
  });

  it('deleting or erasing the customer clears customerId on its leads, each with its lead.updated event; converting again makes one anew', async () => {
    for (const remove of ['delete', 'erase'] as const) {
      const address = email();
      const lead = await createLead({ email: address });
      const first = await convert(lead._id);
      assert.equal(first.status, 201);
      const customerId = first.body.customer._id as string;
      const removed =
        remove === 'delete'
          ? await ctx.request('DELETE', `${API}/customers/${customerId}`, { token: tenant.token })
          : await ctx.request('POST', `${API}/personal-data/erase`, { token: tenant.token, body: { email: address } });
      assert.equal(removed.status, 200, removed.text);
      if (remove === 'erase') continue; // the lead, with the same e-mail, is erased too
      const read = await ctx.request('GET', `${API}/leads/${lead._id}`, { token: tenant.token });
      assert.equal(read.body.customerId, null, 'no link to a customer that is gone');
      // On PostgreSQL, a transaction open anywhere (another suite's) holds the newest events back a moment.
      await feedSettled(ctx.db, tenant.id);
      const events = await ctx.request('GET', `${API}/events`, {
        token: tenant.token,
        query: { objectId: lead._id, limit: '1000' },
      });
      const unlinked = events.body.at(-1);
      assert.equal(unlinked.type, 'lead.updated');
      assert.deepEqual(unlinked.data.changedFields, ['customerId']);
      assert.deepEqual(unlinked.data.previous, { customerId });
      const again = await convert(lead._id);
      assert.equal(again.status, 201, 'a customer made anew');
      assert.notEqual(again.body.customer._id, customerId);
      assert.equal((await customersWith(address)).length, 1, 'one customer with the e-mail, never two');
    }
  });

  it('erasing a customer unlinks the leads that kept another e-mail', async () => {
    const customerAddress = email();
    const lead = await createLead({ email: customerAddress });
    const converted = await convert(lead._id);
    await ctx.request('PUT', `${API}/leads/${lead._id}`, { token: tenant.token, body: { email: email() } });
    const erased = await ctx.request('POST', `${API}/personal-data/erase`, {
      token: tenant.token,
      body: { email: customerAddress },
    });
    assert.equal(erased.status, 200);
    const read = await ctx.request('GET', `${API}/leads/${lead._id}`, { token: tenant.token });
    assert.equal(read.status, 200);
    assert.equal(read.body.customerId, null, `still linked to ${converted.body.customer._id}`);
  });

  it('an unknown lead is a 404', async () => {
    const res = await convert('00000000-0000-4000-8000-000000000000');
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'not_found');
  });
});

describeEachBackend(
  'lead conversion without a won status (SPEC §13)',
  (ctx) => {
    it('links the customer and leaves the status as it was', async () => {
      const tenant = await ctx.tenant();
      const lead = await ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        body: { name: 'Ana', email: email(), status: 'open' },
      });
      const res = await ctx.request('POST', `${API}/leads/${lead.body._id}/convert`, { token: tenant.token });
      assert.equal(res.status, 201);
      assert.equal(res.body.lead.status, 'open');
      assert.equal(res.body.lead.customerId, res.body.customer._id);
    });
  },
  { FUNIL_LEAD_STATUSES: 'open,closed' },
);
