import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

/** SPEC §8 on both resources: ETag on every single-object answer, If-Match honoured atomically. */
for (const resource of ['leads', 'customers'] as const) {
  describeEachBackend(`ETag and If-Match on ${resource}`, (ctx) => {
    let tenant: TestTenant;
    let other: TestTenant;
    let n = 0;
    const create = async () => {
      n += 1;
      const body = resource === 'leads' ? { name: `Lead ${n}`, phone: '1' } : { name: `C ${n}`, email: `c${n}@x.com` };
      const res = await ctx.request('POST', `${API}/${resource}`, { token: tenant.token, body });
      assert.equal(res.status, 201);
      return res;
    };
    const read = (id: string) => ctx.request('GET', `${API}/${resource}/${id}`, { token: tenant.token });

    before(async () => {
      tenant = await ctx.tenant();
      other = await ctx.tenant('Other');
    });

    it('answers an ETag on POST, GET, PUT and PUT status, changing with every write (SPEC §8)', async () => {
      const created = await create();
      const id = created.body._id;
      const first = created.headers.etag as string;
      assert.match(first, /^"\d+"$/);
      assert.equal((await read(id)).headers.etag, first);
      const updated = await ctx.request('PUT', `${API}/${resource}/${id}`, {
        token: tenant.token,
        body: { notes: 'x' },
      });
      assert.equal(updated.status, 200);
      assert.match(updated.headers.etag as string, /^"\d+"$/);
      assert.notEqual(updated.headers.etag, first);
      const status = resource === 'leads' ? 'won' : 'blocked';
      const moved = await ctx.request('PUT', `${API}/${resource}/${id}/status`, {
        token: tenant.token,
        body: { status },
      });
      assert.notEqual(moved.headers.etag, updated.headers.etag);
      assert.equal((await read(id)).headers.etag, moved.headers.etag);
    });

    it('applies a PUT whose If-Match is current, and refuses a stale one with 412, changing nothing (SPEC §8)', async () => {
      const created = await create();
      const id = created.body._id;
      const etag = created.headers.etag as string;
      const ok = await ctx.request('PUT', `${API}/${resource}/${id}`, {
        token: tenant.token,
        headers: { 'if-match': etag },
        body: { notes: 'first writer' },
      });
      assert.equal(ok.status, 200);
      const stale = await ctx.request('PUT', `${API}/${resource}/${id}`, {
        token: tenant.token,
        headers: { 'if-match': etag },
        body: { notes: 'second writer' },
      });
      assert.equal(stale.status, 412);
      assert.equal(stale.body.code, 'precondition_failed');
      assert.equal(stale.body.success, false);
      const after = await read(id);
      assert.equal(after.body.notes, 'first writer');
      assert.equal(after.headers.etag, ok.headers.etag);

      const staleStatus = await ctx.request('PUT', `${API}/${resource}/${id}/status`, {
        token: tenant.token,
        headers: { 'if-match': etag },
        body: { status: resource === 'leads' ? 'lost' : 'inactive' },
      });
      assert.equal(staleStatus.status, 412);
      assert.deepEqual((await read(id)).body, after.body);
    });

    it('accepts a list of tags and *, and never a weak tag (RFC 9110)', async () => {
      const created = await create();
      const id = created.body._id;
      const etag = created.headers.etag as string;
      const weak = await ctx.request('PUT', `${API}/${resource}/${id}`, {
        token: tenant.token,
        headers: { 'if-match': `W/${etag}` },
        body: { notes: 'weak' },
      });
      assert.equal(weak.status, 412);
      const listed = await ctx.request('PUT', `${API}/${resource}/${id}`, {
        token: tenant.token,
        headers: { 'if-match': `"999", ${etag}` },
        body: { notes: 'listed' },
      });
      assert.equal(listed.status, 200);
      const star = await ctx.request('PUT', `${API}/${resource}/${id}`, {
        token: tenant.token,
        headers: { 'if-match': '*' },
        body: { notes: 'star' },
      });
      assert.equal(star.status, 200);
    });

    it('deletes only with a current If-Match; a stale one is 412 and the record stays (SPEC §8)', async () => {
      const created = await create();
      const id = created.body._id;
      const etag = created.headers.etag as string;
      await ctx.request('PUT', `${API}/${resource}/${id}`, { token: tenant.token, body: { notes: 'moved on' } });
      const stale = await ctx.request('DELETE', `${API}/${resource}/${id}`, {
        token: tenant.token,
        headers: { 'if-match': etag },
      });
      assert.equal(stale.status, 412);
      const current = (await read(id)).headers.etag as string;
      const ok = await ctx.request('DELETE', `${API}/${resource}/${id}`, {
        token: tenant.token,
        headers: { 'if-match': current },
      });
      assert.equal(ok.status, 200);
      assert.equal((await read(id)).status, 404);
    });

    it('answers 404, not 412, for an unknown id or another tenant’s record (SPEC §2 order)', async () => {
      const created = await create();
      const res = await ctx.request('PUT', `${API}/${resource}/${created.body._id}`, {
        token: other.token,
        headers: { 'if-match': '"0"' },
        body: { notes: 'x' },
      });
      assert.equal(res.status, 404);
      const del = await ctx.request('DELETE', `${API}/${resource}/${created.body._id}`, {
        token: other.token,
        headers: { 'if-match': '"0"' },
      });
      assert.equal(del.status, 404);
    });

    it('lets exactly one of 10 concurrent If-Match writers win (SPEC §8)', async () => {
      const created = await create();
      const id = created.body._id;
      const etag = created.headers.etag as string;
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          ctx.request('PUT', `${API}/${resource}/${id}`, {
            token: tenant.token,
            headers: { 'if-match': etag },
            body: { notes: `writer ${i}` },
          }),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [200, ...Array(9).fill(412)]);
      const winner = answers.find((a) => a.status === 200);
      assert.equal((await read(id)).body.notes, winner?.body.notes);
    });
  });
}
