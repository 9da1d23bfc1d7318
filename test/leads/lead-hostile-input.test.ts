import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

describeEachBackend('lead hostile input', (ctx) => {
  let tenant: TestTenant;
  const post = (raw: string) => ctx.request('POST', `${API}/leads`, { token: tenant.token, body: raw });
  const countLeads = async () => {
    const row = await ctx.db
      .selectFrom('leads')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenantId', '=', tenant.id)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  before(async () => {
    tenant = await ctx.tenant();
  });

  it('stores SQL injection strings verbatim and returns them as sent (SPEC §3)', async () => {
    const hostile = {
      name: "Robert'); DROP TABLE leads;--",
      email: 'x@example.com',
      phone: "1' OR '1'='1",
      source: '"; select pg_sleep(10); --',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4j-style probe, sent as plain text on purpose
      notes: '$1 $$ \\x00 %s %n {{7*7}} ${jndi:ldap://x}',
    };
    const res = await post(JSON.stringify(hostile));
    assert.equal(res.status, 201);
    for (const [field, value] of Object.entries(hostile)) assert.equal(res.body[field], value, field);
    const stored = await ctx.db
      .selectFrom('leads')
      .select(['name', 'phone', 'source', 'notes'])
      .where('id', '=', res.body._id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored, {
      name: hostile.name,
      phone: hostile.phone,
      source: hostile.source,
      notes: hostile.notes,
    });
    const list = await ctx.request('GET', `${API}/leads`, { token: tenant.token });
    assert.equal(list.status, 200);
  });

  it('refuses a body with __proto__ or constructor.prototype and creates nothing (SPEC §2)', async () => {
    const before = await countLeads();
    for (const raw of [
      '{"name":"Proto","email":"p@example.com","__proto__":{"isAdmin":true}}',
      '{"name":"Proto","email":"p@example.com","constructor":{"prototype":{"isAdmin":true}}}',
      '{"name":"Proto","email":"p@example.com","notes":{"__proto__":{"x":1}}}',
    ]) {
      const res = await post(raw);
      assert.equal(res.status, 400, raw);
      assert.equal(res.body.success, false);
      assert.equal(res.body.code, 'validation_failed');
      assert.match(res.body.error, /chave proibida \(__proto__ ou constructor\.prototype\)/);
    }
    assert.equal(await countLeads(), before);
    assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
  });

  it('answers 400, not 500, to the NUL character in any string field (SPEC §2)', async () => {
    const before = await countLeads();
    for (const field of ['name', 'email', 'phone', 'source', 'notes']) {
      const body = { name: 'Nul', phone: '1', [field]: 'a\u0000b' };
      const res = await post(JSON.stringify(body));
      assert.equal(res.status, 400, field);
      assert.equal(res.body.code, 'validation_failed', field);
    }
    assert.equal(await countLeads(), before);
  });

  it('refuses half a character (a lone UTF-16 surrogate) instead of storing U+FFFD (SPEC §2)', async () => {
    const before = await countLeads();
    for (const raw of [
      String.raw`{"name":"Half \ud800 char","email":"s@example.com"}`,
      String.raw`{"name":"Half char","email":"s@example.com","notes":"\udc00"}`,
    ]) {
      const res = await post(raw);
      assert.equal(res.status, 400, raw);
      assert.equal(res.body.code, 'validation_failed');
    }
    const paired = await post(String.raw`{"name":"Emoji \ud83d\ude00","email":"s@example.com"}`);
    assert.equal(paired.status, 201);
    assert.equal(paired.body.name, 'Emoji 😀');
    assert.equal(await countLeads(), before + 1);
  });

  it('answers 400 to deep nesting anywhere in a body, without crashing (SPEC §2)', async () => {
    const before = await countLeads();
    const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const res = await post(`{"name":"Deep","phone":"1","notes":${nested(10_000)}}`);
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'validation_failed');
    assert.match(res.body.error, /64 níveis/);
    // In a field the schema takes as anything (a read-only one, ignored): JSON.stringify, which
    // hashes the body for its Idempotency-Key, overflowed its stack on it — a 500.
    for (const body of [
      `{"name":"Deep","phone":"1","_id":${nested(200_000)}}`,
      `{"name":"Deep","phone":"1","tenant":{"a":${nested(65)}}}`,
    ]) {
      const keyed = await ctx.request('POST', `${API}/leads`, {
        token: tenant.token,
        headers: { 'idempotency-key': `deep-${body.length}` },
        body,
      });
      assert.equal(keyed.status, 400);
      assert.equal(keyed.body.code, 'validation_failed');
    }
    // 64 levels are fine: the limit is far above any body the API takes.
    const fine = await post(`{"name":"Deep","phone":"1","_id":${nested(63)}}`);
    assert.equal(fine.status, 201);
    assert.equal(await countLeads(), before + 1);
  });

  it('round-trips emoji, accents, right-to-left and combining characters (SPEC §3)', async () => {
    const names = ['Zoë 😀 Ñandú', 'مريم الحسن', 'e\u0301 combining', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 名前'];
    for (const name of names) {
      const res = await post(JSON.stringify({ name, phone: '1', notes: name }));
      assert.equal(res.status, 201, name);
      assert.equal(res.body.name, name);
      const read = await ctx.request('GET', `${API}/leads/${res.body._id}`, { token: tenant.token });
      assert.equal(read.body.notes, name);
    }
  });
});
