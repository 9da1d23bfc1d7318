import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

describeEachBackend('unique customer e-mail under concurrency (SPEC §4)', (ctx) => {
  let tenant: TestTenant;

  before(async () => {
    tenant = await ctx.tenant();
  });

  it('lets exactly one of 30 parallel creates with one e-mail (in any case) through, over a real socket', async () => {
    const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          fetch(`${address}${API}/customers`, {
            method: 'POST',
            headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Racer ${i}`, email: i % 2 ? 'RACE@example.com' : 'race@EXAMPLE.com' }),
          }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, string> })),
        ),
      );
      const created = answers.filter((a) => a.status === 201);
      const conflicts = answers.filter((a) => a.status === 409);
      assert.equal(created.length, 1, JSON.stringify(answers.map((a) => a.status)));
      assert.equal(conflicts.length, 29);
      for (const conflict of conflicts) {
        assert.equal(conflict.body.code, 'conflict');
        assert.equal(conflict.body.existingId, created[0]?.body._id);
      }
    } finally {
      await ctx.app.server.close();
    }
    const rows = await ctx.db.selectFrom('customers').select('id').where('email', '=', 'race@example.com').execute();
    assert.equal(rows.length, 1);
  });

  it('maps a conflict on update to 409 with the holder’s id, and leaves the row unchanged', async () => {
    const post = (email: string) =>
      ctx.request('POST', `${API}/customers`, { token: tenant.token, body: { name: 'Holder', email } });
    const holder = await post('holder@example.com');
    const mover = await post('mover@example.com');
    const res = await ctx.request('PUT', `${API}/customers/${mover.body._id}`, {
      token: tenant.token,
      body: { email: 'HOLDER@example.com', phone: '123' },
    });
    assert.equal(res.status, 409);
    assert.equal(res.body.existingId, holder.body._id);
    const after = await ctx.request('GET', `${API}/customers/${mover.body._id}`, { token: tenant.token });
    assert.deepEqual(after.body, mover.body);
  });
});
