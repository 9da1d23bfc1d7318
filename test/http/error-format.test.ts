import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { before, it } from 'node:test';
import { assertError } from '../helpers/assert-error.js';
import { ADMIN_API, API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const LEAD = { name: 'Maria', phone: '+55 11 5555-0000' };
const ONE_MIB = 1024 * 1024;

describeEachBackend('HTTP format and error answers', (ctx) => {
  let tenant: TestTenant;
  before(async () => {
    tenant = await ctx.tenant();
  });

  const postLead = (body: string, contentType?: string) =>
    ctx.request('POST', `${API}/leads`, {
      token: tenant.token,
      body,
      headers: contentType ? { 'content-type': contentType } : {},
    });

  it('gives every 400 the §2 shape, with details of exactly field and message (SPEC §2)', async () => {
    const res = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { ...LEAD, score: '10' } });
    assertError(res, 400, 'validation_failed', { details: true });
    assert.ok(res.body.details.length >= 1);
    for (const detail of res.body.details) {
      assert.deepEqual(Object.keys(detail).sort(), ['field', 'message']);
      assert.equal(typeof detail.message, 'string');
    }
    assert.equal(res.body.details[0].field, 'score');
  });

  it('refuses text/plain and application/xml bodies with 415 unsupported_media_type (SPEC §1.2)', async () => {
    assertError(await postLead(JSON.stringify(LEAD), 'text/plain'), 415, 'unsupported_media_type');
    assertError(await postLead('<lead><name>Maria</name></lead>', 'application/xml'), 415, 'unsupported_media_type');
    assertError(await postLead('name=Maria', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    const leads = await ctx.db.selectFrom('leads').select('id').execute();
    assert.deepEqual(leads, []);
  });

  it('refuses a body sent without Content-Type with 415 (SPEC §1.2)', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `${API}/leads`,
      headers: { authorization: `Bearer ${tenant.token}` },
      payload: Buffer.from(JSON.stringify(LEAD)),
    });
    assert.equal(res.statusCode, 415);
    assert.equal(res.json().code, 'unsupported_media_type');
  });

  it('accepts application/json with a charset parameter (SPEC §1.2)', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON']) {
      const res = await postLead(JSON.stringify(LEAD), type);
      assert.equal(res.status, 201, `${type}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.name, 'Maria');
    }
  });

  it('answers malformed JSON with 400 validation_failed (SPEC §1.2, §2)', async () => {
    for (const raw of ['{"name": "Maria",', '{name: "Maria"}', "{'name':'Maria'}", 'not json']) {
      assertError(await postLead(raw), 400, 'validation_failed');
    }
  });

  it('answers a body over 1 MiB with 413 payload_too_large (SPEC §1.3)', async () => {
    const body = JSON.stringify({ ...LEAD, notes: 'a'.repeat(Math.ceil(1.1 * ONE_MIB)) });
    assertError(await postLead(body), 413, 'payload_too_large');
  });

  it('reads a body just under 1 MiB and validates it instead (SPEC §1.3)', async () => {
    const padding = ONE_MIB - JSON.stringify({ ...LEAD, notes: '' }).length - 16;
    const body = JSON.stringify({ ...LEAD, notes: 'a'.repeat(padding) });
    assert.ok(body.length < ONE_MIB);
    const res = await postLead(body);
    assertError(res, 400, 'validation_failed', { details: true });
    assert.equal(res.body.details[0].field, 'notes');
  });

  it('answers an unknown route with 404 not_found, inside and outside the API prefix (SPEC §2)', async () => {
    assertError(await ctx.request('GET', '/nope'), 404, 'not_found');
    assertError(await ctx.request('POST', '/nope', { body: {} }), 404, 'not_found');
    assertError(await ctx.request('GET', `${API}/nope`, { token: tenant.token }), 404, 'not_found');
    assertError(await ctx.request('GET', `${ADMIN_API}/nope`), 404, 'not_found');
    assertError(await ctx.request('PATCH', `${API}/leads`, { token: tenant.token, body: {} }), 404, 'not_found');
  });

  it('writes errors in Portuguese by default and in English for Accept-Language en…, same code (SPEC §2)', async () => {
    const languages: Array<[string | undefined, string]> = [
      [undefined, 'O nome é obrigatório e é necessário informar um e-mail ou telefone.'],
      ['pt-BR', 'O nome é obrigatório e é necessário informar um e-mail ou telefone.'],
      ['pt-BR,pt;q=0.9,en;q=0.8', 'O nome é obrigatório e é necessário informar um e-mail ou telefone.'],
      ['en-US', 'Name is required, and an e-mail or a phone is also needed.'],
      ['en', 'Name is required, and an e-mail or a phone is also needed.'],
      ['en-GB,en;q=0.9', 'Name is required, and an e-mail or a phone is also needed.'],
    ];
    for (const [language, message] of languages) {
      const headers: Record<string, string> = language ? { 'accept-language': language } : {};
      const res = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: { name: 'x' }, headers });
      assertError(res, 400, 'validation_failed', { details: res.body.details !== undefined });
      assert.equal(res.body.error, message, `Accept-Language: ${language}`);
    }
    const pt = await ctx.request('GET', `${API}/leads`);
    const en = await ctx.request('GET', `${API}/leads`, { headers: { 'accept-language': 'en-US' } });
    assertError(pt, 403, 'forbidden');
    assertError(en, 403, 'forbidden');
    assert.notEqual(pt.body.error, en.body.error);
    const ptMissing = await ctx.request('GET', '/nope', { headers: { 'accept-language': 'pt-BR' } });
    const enMissing = await ctx.request('GET', '/nope', { headers: { 'accept-language': 'en-US' } });
    assert.equal(ptMissing.body.error, 'Rota não encontrada.');
    assert.equal(enMissing.body.error, 'Route not found.');
    assert.equal(ptMissing.body.code, enMissing.body.code);
  });

  it('accepts a DELETE with Content-Type: application/json and no body (SPEC §1.2)', async () => {
    const lead = await ctx.request('POST', `${API}/leads`, { token: tenant.token, body: LEAD });
    assert.equal(lead.status, 201);
    const res = await ctx.request('DELETE', `${API}/leads/${lead.body._id}`, {
      token: tenant.token,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { success: true });
    const gone = await ctx.request('GET', `${API}/leads/${lead.body._id}`, { token: tenant.token });
    assertError(gone, 404, 'not_found');
  });

  it('answers what Node refuses before a request exists in the §2 shape, with X-Request-Id (SPEC §2, §1.4)', async () => {
    const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    // A filter too long for a URL: the request line and headers pass Node's 16 KiB.
    const long = await fetch(`${base}${API}/events?filter=${'a'.repeat(17_000)}`, {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    assert.equal(long.status, 431);
    assert.match(long.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const body = (await long.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['success', 'error', 'code']);
    assert.equal(body.code, 'validation_failed');
    assert.match(String(body.error), /16 KiB/);

    // A request line that is no HTTP at all, and a search pasted into a URL unencoded.
    const { port } = new URL(base);
    const sent = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(Buffer.from(request, 'utf8')));
        let answer = '';
        socket.on('data', (chunk) => {
          answer += chunk;
        });
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
    const unencoded = await sent(`GET ${API}/leads?q=João HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    assert.match(unencoded, /^HTTP\/1\.1 400 Bad Request\r\n/);
    const answer = JSON.parse(unencoded.slice(unencoded.indexOf('\r\n\r\n') + 4));
    assert.equal(answer.code, 'validation_failed');
    assert.match(answer.error, /%C3%A9/);
    const raw = await sent('NOT HTTP AT ALL\r\n\r\n');
    assert.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(raw, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    const text = raw.slice(raw.indexOf('\r\n\r\n') + 4);
    assert.equal(Buffer.byteLength(text), Number(/content-length: (\d+)/i.exec(raw)?.[1]));
    assert.deepEqual(JSON.parse(text), {
      success: false,
      error: 'A requisição HTTP está malformada.',
      code: 'validation_failed',
    });
  });
});
