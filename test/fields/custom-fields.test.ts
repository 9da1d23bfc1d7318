import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { assertError, assertForbidden } from '../helpers/assert-error.js';
import { define, fieldBody } from '../helpers/custom-fields.js';
import { API, describeEachBackend } from '../helpers/test-app.js';

function detailFields(answer: { body: { details?: { field: string }[] } }): string[] {
  return (answer.body.details ?? []).map((detail) => detail.field);
}

describeEachBackend('custom field definitions (SPEC §16)', (ctx) => {
  it('defines a field of each type, and reads them back, oldest first', async () => {
    const tenant = await ctx.tenant();
    const types = ['text', 'number', 'integer', 'boolean', 'date', 'datetime', 'select', 'multiselect'];
    for (const type of types) {
      const options = type.endsWith('select') ? { options: [' a ', 'b'] } : {};
      const created = await define(ctx, tenant, fieldBody(`f_${type}`, { type, ...options }));
      assert.deepEqual(
        { ...created, createdAt: null, updatedAt: null },
        {
          resource: 'lead',
          key: `f_${type}`,
          label: `Label of f_${type}`,
          type,
          options: type.endsWith('select') ? ['a', 'b'] : null,
          required: false,
          createdAt: null,
          updatedAt: null,
        },
      );
    }
    await define(ctx, tenant, fieldBody('plan', { resource: 'customer', required: true }));

    const all = await ctx.request('GET', `${API}/fields`, { token: tenant.token });
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.map((field: { key: string }) => field.key),
      [...types.map((type) => `f_${type}`), 'plan'],
    );
    const customers = await ctx.request('GET', `${API}/fields?resource=customer`, { token: tenant.token });
    assert.deepEqual(
      customers.body.map((field: { key: string; required: boolean }) => [field.key, field.required]),
      [['plan', true]],
    );
    const one = await ctx.request('GET', `${API}/fields/lead/f_select`, { token: tenant.token });
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.options, ['a', 'b']);
  });

  it('refuses a bad definition with a 400 naming the field at fault', async () => {
    const tenant = await ctx.tenant();
    const cases: [Record<string, unknown>, string][] = [
      [fieldBody('Upper'), 'key'],
      [fieldBody('1st'), 'key'],
      [fieldBody('a'.repeat(41)), 'key'],
      [fieldBody('has-dash'), 'key'],
      [fieldBody('ok', { resource: 'deal' }), 'resource'],
      [fieldBody('ok', { type: 'money' }), 'type'],
      [fieldBody('ok', { label: '  ' }), 'label'],
      [fieldBody('ok', { options: ['x'] }), 'options'],
      [fieldBody('ok', { type: 'select' }), 'options'],
      [fieldBody('ok', { type: 'select', options: [] }), 'options'],
      [fieldBody('ok', { type: 'select', options: ['x', ' x'] }), 'options'],
      [fieldBody('ok', { type: 'select', options: ['x'.repeat(101)] }), 'options.0'],
      [fieldBody('ok', { type: 'multiselect', options: Array.from({ length: 101 }, (_, i) => `o${i}`) }), 'options'],
      [fieldBody('ok', { required: 'yes' }), 'required'],
      [fieldBody('ok', { extra: 1 }), 'extra'],
    ];
    for (const [body, field] of cases) {
      const answer = await ctx.request('POST', `${API}/fields`, { token: tenant.token, body });
      assertError(answer, 400, 'validation_failed', { details: true });
      assert.ok(detailFields(answer).includes(field), `${JSON.stringify(body)}: ${answer.text}`);
    }
    const none = await ctx.request('GET', `${API}/fields`, { token: tenant.token });
    assert.deepEqual(none.body, []);
  });

  it('keys are unique per resource: a second one is a 409, the other resource may use it', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('segment'));
    const again = await ctx.request('POST', `${API}/fields`, { token: tenant.token, body: fieldBody('segment') });
    assertError(again, 409, 'conflict');
    await define(ctx, tenant, fieldBody('segment', { resource: 'customer', type: 'integer' }));
  });

  it('takes at most 100 fields per resource, even when the last ones are created at once', async () => {
    const tenant = await ctx.tenant();
    for (let i = 0; i < 96; i++) await define(ctx, tenant, fieldBody(`f${i}`));
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ctx.request('POST', `${API}/fields`, { token: tenant.token, body: fieldBody(`last${i}`) }),
      ),
    );
    assert.equal(answers.filter((answer) => answer.status === 201).length, 4);
    for (const answer of answers.filter((a) => a.status !== 201)) assertError(answer, 409, 'conflict');
    await define(ctx, tenant, fieldBody('other', { resource: 'customer' }));
  });

  it('changes label, options and required; never the type', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('size', { type: 'select', options: ['s', 'm'] }));
    const url = `${API}/fields/lead/size`;
    const changed = await ctx.request('PUT', url, {
      token: tenant.token,
      body: { label: 'Size', options: ['s', 'm', 'l'], required: true, type: 'select', key: 'ignored' },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.label, 'Size');
    assert.deepEqual(changed.body.options, ['s', 'm', 'l']);
    assert.equal(changed.body.required, true);
    assert.equal(changed.body.key, 'size');

    const retype = await ctx.request('PUT', url, { token: tenant.token, body: { type: 'text' } });
    assertError(retype, 400, 'validation_failed', { details: true });
    assert.deepEqual(detailFields(retype), ['type']);
    const empty = await ctx.request('PUT', url, { token: tenant.token, body: {} });
    assertError(empty, 400, 'validation_failed', { details: true });
    const onlyIgnored = await ctx.request('PUT', url, { token: tenant.token, body: { key: 'x' } });
    assertError(onlyIgnored, 400, 'validation_failed');
    const noOptions = await ctx.request('PUT', url, { token: tenant.token, body: { options: null } });
    assertError(noOptions, 400, 'validation_failed', { details: true });

    await define(ctx, tenant, fieldBody('note'));
    const textOptions = await ctx.request('PUT', `${API}/fields/lead/note`, {
      token: tenant.token,
      body: { options: ['a'] },
    });
    assertError(textOptions, 400, 'validation_failed', { details: true });
    assert.deepEqual(detailFields(textOptions), ['options']);
    const readBack = await ctx.request('PUT', `${API}/fields/lead/note`, {
      token: tenant.token,
      body: { label: 'Note', options: null },
    });
    assert.equal(readBack.status, 200, readBack.text);
    assert.equal(readBack.body.options, null);
  });

  it('a path that names no field is a 404: a malformed one before the body is looked at', async () => {
    const tenant = await ctx.tenant();
    for (const path of ['deal/size', 'lead/Size', 'lead/a-b']) {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const answer = await ctx.request(method, `${API}/fields/${path}`, {
          token: tenant.token,
          ...(method === 'PUT' ? { body: { label: '' } } : {}),
        });
        assertError(answer, 404, 'not_found');
      }
    }
    await define(ctx, tenant, fieldBody('size'));
    for (const path of ['lead/missing', 'customer/size']) {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const answer = await ctx.request(method, `${API}/fields/${path}`, {
          token: tenant.token,
          ...(method === 'PUT' ? { body: { label: 'x' } } : {}),
        });
        assertError(answer, 404, 'not_found');
      }
    }
  });

  it('changes need fields:write; any token of the tenant reads the definitions and their schema', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('segment'));
    const reader = await ctx.token(tenant.id, ['customers:read']);
    const writer = await ctx.token(tenant.id, ['leads:write', 'customers:write', 'webhooks:write']);
    assertForbidden(await ctx.request('POST', `${API}/fields`, { token: writer.token, body: fieldBody('x') }));
    assertForbidden(
      await ctx.request('PUT', `${API}/fields/lead/segment`, { token: writer.token, body: { label: 'x' } }),
    );
    assertForbidden(await ctx.request('DELETE', `${API}/fields/lead/segment`, { token: writer.token }));
    assertForbidden(await ctx.request('GET', `${API}/fields`));
    for (const url of [`${API}/fields`, `${API}/fields/lead/segment`, `${API}/fields/schema?resource=lead`]) {
      assert.equal((await ctx.request('GET', url, { token: reader.token })).status, 200, url);
    }
    const fieldsOnly = await ctx.token(tenant.id, ['fields:write']);
    const created = await ctx.request('POST', `${API}/fields`, { token: fieldsOnly.token, body: fieldBody('y') });
    assert.equal(created.status, 201);
  });

  it("keeps each tenant's fields apart: one key, two types, each tenant's own rules", async () => {
    const [a, b] = [await ctx.tenant(), await ctx.tenant()];
    await define(ctx, a, fieldBody('size', { type: 'integer' }));
    await define(ctx, b, fieldBody('size', { type: 'select', options: ['big'] }));
    assert.deepEqual(
      (await ctx.request('GET', `${API}/fields`, { token: b.token })).body.map((f: { type: string }) => f.type),
      ['select'],
    );
    assert.equal((await ctx.request('GET', `${API}/fields/lead/size`, { token: a.token })).body.type, 'integer');
    await ctx.request('DELETE', `${API}/fields/lead/size`, { token: b.token });
    assert.equal((await ctx.request('GET', `${API}/fields/lead/size`, { token: a.token })).status, 200);
  });

  it('GET /fields/schema gives the JSON Schema of `custom`, which accepts what the API accepts', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('source', { label: 'UTM source', required: true }));
    await define(ctx, tenant, fieldBody('employees', { type: 'integer' }));
    await define(ctx, tenant, fieldBody('signed', { type: 'date' }));
    await define(ctx, tenant, fieldBody('tags', { type: 'multiselect', options: ['crm', 'erp'] }));
    const answer = await ctx.request('GET', `${API}/fields/schema?resource=lead`, { token: tenant.token });
    assert.equal(answer.status, 200);
    const schema = answer.body;
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.deepEqual(schema.required, ['source']);
    assert.equal(schema.properties.source.title, 'UTM source');
    assert.deepEqual(schema.properties.tags.items.enum, ['crm', 'erp']);
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    assert.equal(validate({ source: 'google', employees: 40, signed: '2026-11-24', tags: ['crm'] }), true);
    for (const bad of [{}, { source: 'g', employees: 1.5 }, { source: 'g', tags: ['nope'] }, { source: 'g', x: 1 }]) {
      assert.equal(validate(bad), false, JSON.stringify(bad));
    }
    const missing = await ctx.request('GET', `${API}/fields/schema`, { token: tenant.token });
    assertError(missing, 400, 'validation_failed', { details: true });
    const customers = await ctx.request('GET', `${API}/fields/schema?resource=customer`, { token: tenant.token });
    assert.deepEqual(customers.body.properties, {});
  });
});
