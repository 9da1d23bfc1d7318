import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { assertError } from '../helpers/assert-error.js';
import { define, fieldBody } from '../helpers/custom-fields.js';
import { feedSettled } from '../helpers/feed.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** For each type: values it takes (and how it stores them), values it refuses. */
const TYPES: Record<string, { options?: string[]; valid: [Json, Json][]; invalid: Json[] }> = {
  text: {
    valid: [
      ['hello', 'hello'],
      ['  padded  ', 'padded'],
      ['x'.repeat(1000), 'x'.repeat(1000)],
    ],
    invalid: [1, true, ['a'], { a: 1 }, 'x'.repeat(1001)],
  },
  number: {
    valid: [
      [1.5, 1.5],
      [-3, -3],
      [0, 0],
      [1e21, 1e21],
    ],
    invalid: ['1.5', true, [1], { n: 1 }],
  },
  integer: {
    valid: [
      [42, 42],
      [-7, -7],
      [9007199254740991, 9007199254740991],
    ],
    invalid: [1.5, '42', 9007199254740992, false],
  },
  boolean: {
    valid: [
      [true, true],
      [false, false],
    ],
    invalid: ['true', 0, 1, ['true']],
  },
  date: {
    valid: [
      ['2026-11-24', '2026-11-24'],
      ['2024-02-29', '2024-02-29'],
    ],
    invalid: ['2026-02-30', '24/11/2026', '2026-11-24T10:00:00Z', 20261124, '2026-13-01'],
  },
  datetime: {
    valid: [
      ['2026-11-24T10:00:00Z', '2026-11-24T10:00:00.000Z'],
      ['2026-11-24T07:00:00.5-03:00', '2026-11-24T10:00:00.500Z'],
    ],
    invalid: ['2026-11-24T10:00:00', '2026-11-24', 'yesterday', 1732442400000],
  },
  select: {
    options: ['small', 'large'],
    valid: [
      ['small', 'small'],
      [' large ', 'large'],
    ],
    invalid: ['medium', 'Small', ['small'], 1],
  },
  multiselect: {
    options: ['crm', 'erp', 'bi'],
    valid: [
      [['crm'], ['crm']],
      [
        ['bi', 'crm'],
        ['bi', 'crm'],
      ],
    ],
    invalid: ['crm', ['crm', 'crm'], ['crm', 'nope'], [1], [null]],
  },
};

/**
 * Whether a custom field of `type` (with TYPES' options) takes `value`: a value of its own JSON
 * type that its rules accept, or the empty value of its own shape (which clears it).
 */
function takes(type: string, value: unknown): boolean {
  const options = TYPES[type]?.options ?? [];
  const text = typeof value === 'string' ? value.trim() : undefined;
  switch (type) {
    case 'text':
      return text !== undefined && text.length <= 1000;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isSafeInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return text === '' || (text !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text)));
    case 'datetime':
      return (
        text === '' ||
        (text !== undefined &&
          /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:\d{2})$/.test(text) &&
          !Number.isNaN(Date.parse(text)))
      );
    case 'select':
      return text === '' || (text !== undefined && options.includes(text));
    case 'multiselect':
      return Array.isArray(value) && new Set(value).size === value.length && value.every((v) => options.includes(v));
    default:
      return false;
  }
}

describeEachBackend('custom values on records (SPEC §16)', (ctx) => {
  async function tenantWithEveryType(resource: 'lead' | 'customer'): Promise<TestTenant> {
    const tenant = await ctx.tenant();
    for (const [type, { options }] of Object.entries(TYPES)) {
      await define(ctx, tenant, fieldBody(`f_${type}`, { resource, type, ...(options && { options }) }));
    }
    return tenant;
  }

  let seq = 0;
  const leadBody = (custom?: unknown) => ({ name: 'Lead', email: `l${++seq}@example.com`, custom });
  const customerBody = (custom?: unknown) => ({ name: 'Customer', email: `c${++seq}@example.com`, custom });

  for (const resource of ['lead', 'customer'] as const) {
    const path = `${API}/${resource}s`;
    const body = resource === 'lead' ? leadBody : customerBody;

    it(`${resource}s: every type stores its valid values, normalised, and refuses the others naming custom.<key>`, async () => {
      const tenant = await tenantWithEveryType(resource);
      for (const [type, { valid, invalid }] of Object.entries(TYPES)) {
        const key = `f_${type}`;
        for (const [sent, stored] of valid) {
          const created = await ctx.request('POST', path, { token: tenant.token, body: body({ [key]: sent }) });
          assert.equal(created.status, 201, `${type} ${JSON.stringify(sent)}: ${created.text}`);
          assert.deepEqual(created.body.custom, { [key]: stored });
          const read = await ctx.request('GET', `${path}/${created.body._id}`, { token: tenant.token });
          assert.deepEqual(read.body.custom, { [key]: stored });
        }
        for (const sent of invalid) {
          const refused = await ctx.request('POST', path, { token: tenant.token, body: body({ [key]: sent }) });
          assertError(refused, 400, 'validation_failed', { details: true });
          assert.deepEqual(
            refused.body.details.map((d: { field: string }) => d.field),
            [`custom.${key}`],
            `${type} ${JSON.stringify(sent)}`,
          );
        }
      }
    });

    it(`${resource}s: custom is {} without values, merged key by key on update; null, or the empty value of its own shape, clears a key`, async () => {
      const tenant = await tenantWithEveryType(resource);
      const created = await ctx.request('POST', path, { token: tenant.token, body: body() });
      assert.deepEqual(created.body.custom, {});
      const url = `${path}/${created.body._id}`;
      const first = await ctx.request('PUT', url, {
        token: tenant.token,
        body: { custom: { f_text: 'a', f_integer: 1 } },
      });
      assert.deepEqual(first.body.custom, { f_text: 'a', f_integer: 1 });
      const second = await ctx.request('PUT', url, {
        token: tenant.token,
        body: { custom: { f_boolean: false, f_integer: 2 } },
      });
      assert.deepEqual(second.body.custom, { f_text: 'a', f_integer: 2, f_boolean: false });
      const cleared = await ctx.request('PUT', url, {
        token: tenant.token,
        body: { custom: { f_text: '', f_boolean: null, f_multiselect: [] } },
      });
      assert.deepEqual(cleared.body.custom, { f_integer: 2 });
      // Another field alone leaves custom as it was.
      const other = await ctx.request('PUT', url, { token: tenant.token, body: { notes: 'x' } });
      assert.deepEqual(other.body.custom, { f_integer: 2 });
      // A value that changes nothing writes nothing: the same ETag.
      const same = await ctx.request('PUT', url, { token: tenant.token, body: { custom: { f_integer: 2 } } });
      assert.equal(same.headers.etag, other.headers.etag);
    });

    it(`${resource}s: every type refuses every JSON value of another type, "" and [] included, naming custom.<key>, and stores nothing`, async () => {
      const tenant = await tenantWithEveryType(resource);
      // Values of every JSON type; each type takes some of them, and must refuse all the others.
      const anyJson = fc.oneof(
        fc.constant(''),
        fc.constant([]),
        fc.constant({}),
        fc.string({ maxLength: 8 }),
        fc.constantFrom('1', '1.5', 'true', 'false', 'null', '[]', '2026-11-24'),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean()), { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
      );
      const before = await ctx.db
        .selectFrom(resource === 'lead' ? 'leads' : 'customers')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('tenantId', '=', tenant.id)
        .executeTakeFirstOrThrow();
      let refusedCount = 0;
      for (const type of Object.keys(TYPES)) {
        const key = `f_${type}`;
        await fc.assert(
          fc.asyncProperty(
            anyJson.filter((value) => !takes(type, value)),
            async (value) => {
              const refused = await ctx.request('POST', path, { token: tenant.token, body: body({ [key]: value }) });
              assert.equal(refused.status, 400, `${type} took ${JSON.stringify(value)}`);
              assert.deepEqual(
                refused.body.details.map((d: { field: string }) => d.field),
                [`custom.${key}`],
              );
              refusedCount++;
            },
          ),
          { numRuns: 25 },
        );
      }
      const afterwards = await ctx.db
        .selectFrom(resource === 'lead' ? 'leads' : 'customers')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('tenantId', '=', tenant.id)
        .executeTakeFirstOrThrow();
      assert.equal(afterwards.n, before.n, 'nothing stored');
      assert.ok(refusedCount >= 8 * 25);
    });

    it(`${resource}s: an undefined key, or another tenant's, is a 400 naming it; nothing is written`, async () => {
      const tenant = await tenantWithEveryType(resource);
      const other = await ctx.tenant();
      await define(ctx, other, fieldBody('theirs', { resource }));
      for (const custom of [{ theirs: 'x' }, { nope: 1 }, { Bad: 1 }, { f_text: 'ok', nope: 1 }]) {
        const refused = await ctx.request('POST', path, { token: tenant.token, body: body(custom) });
        assertError(refused, 400, 'validation_failed', { details: true });
        const key = Object.keys(custom).find((k) => k !== 'f_text');
        assert.deepEqual(
          refused.body.details.map((d: { field: string }) => d.field),
          [`custom.${key}`],
        );
      }
      for (const custom of [[], 'text', 1, { nested: { a: 1 } }]) {
        const refused = await ctx.request('POST', path, { token: tenant.token, body: body(custom) });
        assertError(refused, 400, 'validation_failed', { details: true });
      }
      const list = await ctx.request('GET', path, { token: tenant.token });
      assert.deepEqual(list.body, []);
    });
  }

  it('a required field must be given on create and cannot be cleared, on every write path', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('origin', { required: true }));
    await define(ctx, tenant, fieldBody('note'));
    const missing = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: leadBody({ note: 'x' }) });
    assertError(missing, 400, 'validation_failed', { details: true });
    assert.deepEqual(
      missing.body.details.map((d: { field: string }) => d.field),
      ['custom.origin'],
    );
    const blank = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: leadBody({ origin: ' ' }) });
    assertError(blank, 400, 'validation_failed', { details: true });

    const created = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: leadBody({ origin: 'ad' }),
    });
    assert.equal(created.status, 201);
    const url = `${API}/leads/${created.body._id}`;
    const clear = await ctx.request('PUT', url, { token: tenant.token, body: { custom: { origin: null } } });
    assertError(clear, 400, 'validation_failed', { details: true });
    assert.equal(clear.body.details[0].field, 'custom.origin');
    const untouched = await ctx.request('PUT', url, { token: tenant.token, body: { custom: { note: 'y' } } });
    assert.deepEqual(untouched.body.custom, { origin: 'ad', note: 'y' });

    // Upsert: a valid create body either way (SPEC §13).
    const upsert = await ctx.request('POST', `${API}/leads?upsert=email`, {
      token: tenant.token,
      body: { name: 'U', email: created.body.email, custom: { note: 'z' } },
    });
    assertError(upsert, 400, 'validation_failed', { details: true });
    const upserted = await ctx.request('POST', `${API}/leads?upsert=email`, {
      token: tenant.token,
      body: { name: 'U', email: created.body.email, custom: { origin: 'form' } },
    });
    assert.equal(upserted.status, 200);
    assert.deepEqual(upserted.body.custom, { origin: 'form', note: 'y' });

    // Batch: the item without it fails alone.
    const batch = await ctx.request('POST', `${API}/leads/batch`, {
      token: tenant.token,
      body: { items: [leadBody({ origin: 'a' }), leadBody(), leadBody({ origin: 'c', nope: 1 })] },
    });
    assert.equal(batch.status, 200);
    assert.deepEqual(
      batch.body.results.map((r: { status: number }) => r.status),
      [201, 400, 400],
    );
    assert.equal(batch.body.results[1].error.details[0].field, 'custom.origin');
    assert.equal(batch.body.results[2].error.details[0].field, 'custom.nope');
    assert.deepEqual(batch.body.results[0].data.custom, { origin: 'a' });
  });

  it('the customer list shows custom; the lead list item does not (seed §2.1)', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('tier', { resource: 'customer' }));
    await define(ctx, tenant, fieldBody('tier'));
    await ctx.request('POST', `${API}/customers`, { token: tenant.token, body: customerBody({ tier: 'gold' }) });
    await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: leadBody({ tier: 'gold' }) });
    const customers = await ctx.request('GET', `${API}/customers`, { token: tenant.token });
    assert.deepEqual(customers.body[0].custom, { tier: 'gold' });
    const leads = await ctx.request('GET', `${API}/leads`, { token: tenant.token });
    assert.equal('custom' in leads.body[0], false);
  });

  it('events name each custom change as custom.<key>, with its former value', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('stage'));
    await define(ctx, tenant, fieldBody('size', { type: 'integer' }));
    const created = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: leadBody({ stage: 'a' }) });
    const id = created.body._id;
    await ctx.request('PUT', `${API}/leads/${id}`, {
      token: tenant.token,
      body: { score: 5, custom: { stage: 'b', size: 3 } },
    });
    await ctx.request('PUT', `${API}/leads/${id}`, { token: tenant.token, body: { custom: { stage: null } } });
    await feedSettled(ctx.db, tenant.id);
    const events = await ctx.request('GET', `${API}/events?objectId=${id}`, { token: tenant.token });
    assert.deepEqual(
      events.body.map((e: { type: string; data: { changedFields: string[]; previous: object } }) => [
        e.type,
        e.data.changedFields,
        e.data.previous,
      ]),
      [
        ['lead.created', [], {}],
        [
          'lead.updated',
          ['score', 'custom.size', 'custom.stage'],
          { score: 0, 'custom.size': null, 'custom.stage': 'a' },
        ],
        ['lead.updated', ['custom.stage'], { 'custom.stage': 'b' }],
      ],
    );
    assert.deepEqual(events.body[2].data.object.custom, { size: 3 });
  });

  it('a key any name the pattern allows works as any other (constructor, prototype)', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('constructor', { type: 'integer' }));
    await define(ctx, tenant, fieldBody('prototype'));
    const created = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: leadBody({ constructor: 1, prototype: 'p' }),
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.custom, { constructor: 1, prototype: 'p' });
    // Required and left out: missing, not Object.prototype.constructor.
    await ctx.request('PUT', `${API}/fields/lead/constructor`, { token: tenant.token, body: { required: true } });
    const without = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: leadBody({ prototype: 'p' }),
    });
    assertError(without, 400, 'validation_failed', { details: true });
    assert.equal(without.body.details[0].field, 'custom.constructor');
    const cleared = await ctx.request('PUT', `${API}/leads/${created.body._id}`, {
      token: tenant.token,
      body: { custom: { constructor: null } },
    });
    assertError(cleared, 400, 'validation_failed', { details: true });
    const refused = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: leadBody({ toString: 1 }) });
    assertError(refused, 400, 'validation_failed', { details: true });
    const polluted = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: `{"name":"x","email":"p@example.com","custom":{"__proto__":{"admin":true}}}`,
    });
    assertError(polluted, 400, 'validation_failed');
    assert.equal(({} as Record<string, unknown>).admin, undefined);
  });

  it('a conversion gives the new customer its custom values', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('plan', { resource: 'customer', required: true }));
    const lead = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: leadBody() });
    const url = `${API}/leads/${lead.body._id}/convert`;
    const refused = await ctx.request('POST', url, { token: tenant.token, body: {} });
    assertError(refused, 400, 'validation_failed', { details: true });
    assert.equal(refused.body.details[0].field, 'custom.plan');
    const converted = await ctx.request('POST', url, { token: tenant.token, body: { custom: { plan: 'pro' } } });
    assert.equal(converted.status, 201, converted.text);
    assert.deepEqual(converted.body.customer.custom, { plan: 'pro' });
    // A lead whose customer exists is linked to it: nothing is created, so nothing is required.
    const twin = await ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body: { name: 'Twin', email: lead.body.email },
    });
    const linked = await ctx.request('POST', `${API}/leads/${twin.body._id}/convert`, { token: tenant.token });
    assert.equal(linked.status, 200, linked.text);
    assert.equal(linked.body.customer._id, converted.body.customer._id);
  });

  it('the database refuses a value of an undefined field or of another JSON type, whoever writes it', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('size', { type: 'integer' }));
    const insert = (custom: object) =>
      sql`insert into leads (id, tenant_id, name, email, status, created_by, custom)
          values (gen_random_uuid(), ${tenant.id}, 'x', 'x@example.com', 'new', ${tenant.tokenId}, ${JSON.stringify(custom)}::jsonb)`.execute(
        ctx.db,
      );
    await insert({ size: 3 });
    await assert.rejects(insert({ other: 3 }), { code: '23514', constraint: 'custom_values_defined' });
    await assert.rejects(insert({ size: '3' }), { code: '23514', constraint: 'custom_values_defined' });
    await assert.rejects(
      sql`update leads set custom = custom || '{"other": 1}' where tenant_id = ${tenant.id}`.execute(ctx.db),
      { code: '23514' },
    );
  });

  it('a writer whose definitions are out of date (another instance) gets a 400, not a stored orphan', async () => {
    const tenant = await ctx.tenant();
    await define(ctx, tenant, fieldBody('legacy'));
    // Another instance: a service with its own copy of the definitions, read before the delete.
    const elsewhere = ctx.services().leads;
    const actor = { tenantId: tenant.id, tokenId: tenant.tokenId, requestId: 'r' };
    const warm = await elsewhere.create(ctx.db, actor, {
      name: 'Warm',
      email: 'w@example.com',
      custom: { legacy: 'a' },
    });
    const deleted = await ctx.request('DELETE', `${API}/fields/lead/legacy`, { token: tenant.token });
    assert.equal(deleted.status, 200);
    await assert.rejects(
      elsewhere.create(ctx.db, actor, { name: 'Stale', email: 's@example.com', custom: { legacy: 'b' } }),
      (error: { statusCode: number; details: { field: string }[] }) =>
        error.statusCode === 400 && error.details[0]?.field === 'custom.legacy',
    );
    // It read the definitions again: the next write is checked against the current ones.
    await assert.rejects(
      elsewhere.create(ctx.db, actor, { name: 'Stale', email: 's@example.com', custom: { legacy: 'b' } }),
      { statusCode: 400 },
    );
    const read = await ctx.request('GET', `${API}/leads/${warm.object._id}`, { token: tenant.token });
    assert.deepEqual(read.body.custom, {});
    // A field defined meanwhile on "this" instance: the other one reads its definitions again rather than refuse it.
    await define(ctx, tenant, fieldBody('fresh', { type: 'select', options: ['a'] }));
    const created = await elsewhere.create(ctx.db, actor, {
      name: 'New',
      email: 'n@example.com',
      custom: { fresh: 'a' },
    });
    assert.deepEqual(created.object.custom, { fresh: 'a' });
    await ctx.request('PUT', `${API}/fields/lead/fresh`, { token: tenant.token, body: { options: ['a', 'b'] } });
    const updated = await elsewhere.update(ctx.db, actor, created.object._id, { custom: { fresh: 'b' } });
    assert.deepEqual(updated.object.custom, { fresh: 'b' });
  });
});
