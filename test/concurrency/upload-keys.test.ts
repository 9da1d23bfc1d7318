import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../src/shared/ids.js';
import { assertError } from '../helpers/assert-error.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { waitFor } from '../helpers/wait-for.js';
import { CSV, importOver, type Json, upload } from '../imports/import-helpers.js';

/** SPEC §7 on an upload read as a stream (`POST /imports`, SPEC §23): its key is bound to its bytes. */
describeEachBackend('Idempotency-Key on an upload (SPEC §7, §23)', (ctx) => {
  let tenant: TestTenant;

  before(async () => {
    tenant = await ctx.tenant();
  });

  /** The tenant's imports, as stored. */
  const importCount = async (): Promise<number> => {
    const { rows } = await sql<{ n: string }>`select count(*) as n from imports where tenant_id = ${tenant.id}`.execute(
      ctx.db,
    );
    return Number(rows[0]?.n);
  };
  const leadsBy = async (source: string): Promise<string[]> => {
    const res = await ctx.api(tenant, 'GET', `/leads?source=${source}&limit=100`);
    assert.equal(res.status, 200, res.text);
    return (res.body as Json[]).map((lead) => lead.name).sort();
  };
  /** `file` sent in two chunks without Content-Length, as a client streaming it sends it. */
  const chunked = (file: string): Readable => {
    const middle = Math.floor(file.length / 2);
    return Readable.from([Buffer.from(file.slice(0, middle)), Buffer.from(file.slice(middle))], { objectMode: false });
  };
  const uploadStream = (key: string, body: Readable) =>
    ctx.app.inject({
      method: 'POST',
      url: `${API}/imports?resource=lead`,
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': CSV, 'idempotency-key': key },
      payload: body,
    });

  it('replays the first import to the same key with the same bytes, and imports nothing more', async () => {
    const before = await importCount();
    const file = 'name,phone,source\nSame Bytes,11 3333-0201,upk-same\n';
    const headers = { 'idempotency-key': `upload-${newId()}` };
    const first = await upload(ctx, tenant.token, file, 'resource=lead', CSV, headers);
    assert.equal(first.status, 202, first.text);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const again = await upload(ctx, tenant.token, file, 'resource=lead', CSV, headers);
    assert.equal(again.status, 202, again.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.headers.location, first.headers.location);
    await importOver(ctx, tenant, first.body.id);
    assert.equal(await importCount(), before + 1);
    assert.deepEqual(await leadsBy('upk-same'), ['Same Bytes']);
  });

  it('answers 422 idempotency_key_reused to the same key with another file of the same length', async () => {
    const file = 'name,phone,source\nAlpha Lead,11 3333-0301,upk-len\n';
    const other = 'name,phone,source\nBravo Lead,11 3333-0302,upk-len\n';
    assert.equal(Buffer.byteLength(other), Buffer.byteLength(file));
    const headers = { 'idempotency-key': `upload-${newId()}` };
    const first = await upload(ctx, tenant.token, file, 'resource=lead', CSV, headers);
    assert.equal(first.status, 202, first.text);
    await importOver(ctx, tenant, first.body.id);
    const before = await importCount();
    const reused = await upload(ctx, tenant.token, other, 'resource=lead', CSV, headers);
    assertError(reused, 422, 'idempotency_key_reused');
    assert.equal(reused.headers['idempotent-replayed'], undefined);
    assert.equal(await importCount(), before);
    assert.deepEqual(await leadsBy('upk-len'), ['Alpha Lead']);
    const read = await ctx.api(tenant, 'GET', `/imports/${first.body.id}`);
    assert.equal(read.body.status, 'succeeded', read.text);
    // The first file is still the key's: sent again, it is replayed.
    const again = await upload(ctx, tenant.token, file, 'resource=lead', CSV, headers);
    assert.equal(again.status, 202, again.text);
    assert.equal(again.body.id, first.body.id);
  });

  it('binds a file sent without Content-Length to its bytes too', async () => {
    const file = 'name,phone,source\nChunked One,11 3333-0401,upk-chunk\n';
    const other = 'name,phone,source\nChunked Two,11 3333-0402,upk-chunk\nChunked Three,11 3333-0403,upk-chunk\n';
    const key = `upload-${newId()}`;
    const first = await uploadStream(key, chunked(file));
    assert.equal(first.statusCode, 202, first.body);
    const id = first.json().id;
    await importOver(ctx, tenant, id);
    const before = await importCount();
    const reused = await uploadStream(key, chunked(other));
    assert.equal(reused.statusCode, 422, reused.body);
    assert.equal(reused.json().code, 'idempotency_key_reused');
    assert.equal(await importCount(), before);
    assert.deepEqual(await leadsBy('upk-chunk'), ['Chunked One']);
    const again = await uploadStream(key, chunked(file));
    assert.equal(again.statusCode, 202, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().id, id);
  });

  it('answers 409 to the same key while the first upload is still being read', async () => {
    const key = `upload-${newId()}`;
    const held = new PassThrough();
    held.write('name,phone,source\nHeld Lead,11 3333-0501,upk-held\n');
    const first = uploadStream(key, held);
    await waitFor(async () => {
      const { rows } = await sql<{ state: string }>`
        select state from idempotency_keys where tenant_id = ${tenant.id} and key = ${key}`.execute(ctx.db);
      return rows[0]?.state === 'running' ? true : undefined;
    });
    const meanwhile = await uploadStream(key, chunked('name,phone,source\nHeld Lead,11 3333-0501,upk-held\n'));
    assert.equal(meanwhile.statusCode, 409, meanwhile.body);
    assert.equal(meanwhile.json().code, 'conflict');
    held.end();
    const done = await first;
    assert.equal(done.statusCode, 202, done.body);
    await importOver(ctx, tenant, done.json().id);
    assert.deepEqual(await leadsBy('upk-held'), ['Held Lead']);
  });

  it('over real HTTP, binds a chunked upload to its bytes', async () => {
    const base = `${await ctx.app.listen({ host: '127.0.0.1', port: 0 })}${API}`;
    const key = `upload-${newId()}`;
    const send = async (file: string) => {
      const response = await fetch(`${base}/imports?resource=lead`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.token}`, 'content-type': CSV, 'idempotency-key': key },
        body: Readable.toWeb(chunked(file)) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      return {
        status: response.status,
        replayed: response.headers.get('idempotent-replayed'),
        body: await response.json(),
      };
    };
    const file = 'name,phone,source\nWire One,11 3333-0701,upk-wire\n';
    const first = await send(file);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    await importOver(ctx, tenant, first.body.id);
    const reused = await send('name,phone,source\nWire Two,11 3333-0702,upk-wire\n');
    assert.equal(reused.status, 422, JSON.stringify(reused.body));
    assert.equal(reused.body.code, 'idempotency_key_reused');
    const again = await send(file);
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal(again.replayed, 'true');
    assert.equal(again.body.id, first.body.id);
    assert.deepEqual(await leadsBy('upk-wire'), ['Wire One']);
  });

  it('leaves JSON bodies as they were: the same body is replayed, another is a 422', async () => {
    const key = `lead-${newId()}`;
    const post = (body: unknown) => ctx.api(tenant, 'POST', '/leads', { body, headers: { 'idempotency-key': key } });
    const first = await post({ name: 'Json Lead', phone: '11 3333-0601' });
    assert.equal(first.status, 201, first.text);
    const again = await post({ name: 'Json Lead', phone: '11 3333-0601' });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.body, first.body);
    assertError(await post({ name: 'Json Lead', phone: '11 3333-0602' }), 422, 'idempotency_key_reused');
  });
});
