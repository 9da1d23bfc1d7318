import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertError } from '../helpers/assert-error.js';
import { ADMIN_API, ADMIN_TOKEN, describeEachBackend } from '../helpers/test-app.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '01890a5d-ac96-774b-bcce-b302099a8057';

describeEachBackend('admin API: tenants', (ctx) => {
  // biome-ignore lint/suspicious/noExplicitAny: JSON as answered.
  let acme: any;
  const admin = (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) =>
    ctx.request(method, `${ADMIN_API}${url}`, { token: ADMIN_TOKEN, body });

  it('creates a tenant: 201 with exactly id, name, active, phoneCountry, createdAt, updatedAt (SPEC §9, §21)', async () => {
    const res = await admin('POST', '/tenants', { name: '  Acme Ltda ' });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), ['active', 'createdAt', 'id', 'name', 'phoneCountry', 'updatedAt']);
    assert.equal(res.body.phoneCountry, 'BR');
    assert.match(res.body.id, UUID);
    assert.equal(res.body.name, 'Acme Ltda');
    assert.equal(res.body.active, true);
    assert.match(res.body.createdAt, ISO_MS);
    assert.match(res.body.updatedAt, ISO_MS);
    acme = res.body;
  });

  it('rejects a tenant without a name, with an empty name or with an unknown field (SPEC §9, §2)', async () => {
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(201) }, { name: 'A', plan: 'gold' }]) {
      const res = await admin('POST', '/tenants', body);
      assertError(res, 400, 'validation_failed', { details: true });
    }
    const unknown = await admin('POST', '/tenants', { name: 'A', plan: 'gold' });
    assert.deepEqual(
      unknown.body.details.map((d: { field: string }) => d.field),
      ['plan'],
    );
  });

  it('lists tenants (SPEC §9)', async () => {
    const beta = (await admin('POST', '/tenants', { name: 'Beta' })).body;
    const res = await admin('GET', '/tenants');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, [acme, beta]);
  });

  it('renames a tenant and leaves the rest as it was (SPEC §9)', async () => {
    const res = await admin('PUT', `/tenants/${acme.id}`, { name: 'Acme S.A.' });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['active', 'createdAt', 'id', 'name', 'phoneCountry', 'updatedAt']);
    assert.equal(res.body.id, acme.id);
    assert.equal(res.body.name, 'Acme S.A.');
    assert.equal(res.body.active, true);
    assert.equal(res.body.createdAt, acme.createdAt);
    assert.ok(res.body.updatedAt >= acme.updatedAt);
    acme = res.body;
  });

  it('deactivates and reactivates a tenant with {active} (SPEC §9, §5.5)', async () => {
    const off = await admin('PUT', `/tenants/${acme.id}`, { active: false });
    assert.equal(off.status, 200);
    assert.equal(off.body.active, false);
    assert.equal(off.body.name, 'Acme S.A.');
    const listed = (await admin('GET', '/tenants')).body.find((t: { id: string }) => t.id === acme.id);
    assert.equal(listed.active, false);
    const on = await admin('PUT', `/tenants/${acme.id}`, { name: 'Acme', active: true });
    assert.equal(on.status, 200);
    assert.equal(on.body.active, true);
    assert.equal(on.body.name, 'Acme');
  });

  it('rejects an empty update, a bad type and an unknown field with 400 (SPEC §9, §2)', async () => {
    for (const body of [{}, { active: 'no' }, { name: '' }, { name: 'A', owner: 'x' }]) {
      const res = await admin('PUT', `/tenants/${acme.id}`, body);
      assertError(res, 400, 'validation_failed', { details: true });
    }
    const stored = await ctx.db.selectFrom('tenants').select(['name', 'active']).where('id', '=', acme.id).execute();
    assert.deepEqual(stored, [{ name: 'Acme', active: true }]);
  });

  it('answers 404 for an unknown tenant id and for a non-UUID id (SPEC §9, §2)', async () => {
    assertError(await admin('PUT', `/tenants/${UNKNOWN_ID}`, { active: false }), 404, 'not_found');
    assertError(await admin('PUT', '/tenants/not-a-uuid', { active: false }), 404, 'not_found');
    // The id is checked before the body (SPEC §2 order).
    assertError(await admin('PUT', '/tenants/not-a-uuid', {}), 404, 'not_found');
  });

  it('refuses a body that is not JSON with 415 (SPEC §1.2)', async () => {
    const res = await ctx.request('POST', `${ADMIN_API}/tenants`, {
      token: ADMIN_TOKEN,
      body: 'name=Acme',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assertError(res, 415, 'unsupported_media_type');
  });
  it("takes the country a tenant's phones are read in, on create and update; refuses one that is none (SPEC §21)", async () => {
    const made = await admin('POST', '/tenants', { name: 'Lisboa', phoneCountry: 'PT' });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.body.phoneCountry, 'PT');
    const moved = await admin('PUT', `/tenants/${made.body.id}`, { phoneCountry: 'US' });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.phoneCountry, 'US');
    for (const bad of ['XX', 'br', 'BRA', '', 1]) {
      const res = await admin('POST', '/tenants', { name: 'Nowhere', phoneCountry: bad });
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
      assert.equal(res.body.details[0].field, 'phoneCountry');
    }
  });
});
