/**
 * The external API's OpenAPI document as Postman imports it (openapi-to-postmanv2, Postman's own
 * importer, with request parameters taken from the document's examples and optional ones left
 * unticked), then every request of the collection sent as the importer built it. Only the path
 * variables are filled in, as a Postman user does, with the ids the earlier requests created.
 * Every answer must be a 2xx that matches the document (TestContext.request checks each against
 * it: status, required headers, body).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { convertV2 } from 'openapi-to-postmanv2';
import { API, describeEachBackend } from '../helpers/test-app.js';
import { waitFor } from '../helpers/wait-for.js';

interface PostmanRequest {
  method: string;
  url: { path?: string[]; query?: { key: string; value: string; disabled?: boolean }[] };
  header?: { key: string; value: string; disabled?: boolean }[];
  body?: { mode?: string; raw?: string };
}
interface PostmanItem {
  name: string;
  item?: PostmanItem[];
  request?: PostmanRequest;
}

/** The collection Postman's importer makes of `document`, its requests in a flat list. */
async function imported(document: unknown): Promise<PostmanRequest[]> {
  const collection = await new Promise<{ item: PostmanItem[] }>((resolve, reject) =>
    convertV2(
      { type: 'json', data: document as object },
      { parametersResolution: 'Example', enableOptionalParameters: false },
      (error, result) => {
        if (error || !result?.result || !result.output?.[0]) reject(error ?? new Error(String(result?.reason)));
        else resolve(result.output[0].data as { item: PostmanItem[] });
      },
    ),
  );
  const flat = (items: PostmanItem[]): PostmanRequest[] =>
    items.flatMap((item) => (item.item ? flat(item.item) : item.request ? [item.request] : []));
  return flat(collection.item);
}

/**
 * Creates before the rest; a retry after the test delivery it retries; what deletes or erases a
 * record after everything that uses it.
 */
function phase({ method, url }: PostmanRequest): number {
  const path = (url.path ?? []).join('/');
  if (method === 'POST' && !path.includes('/')) return 0;
  if (path.endsWith('/retry') || path.endsWith('/undo')) return 2;
  if (method === 'DELETE') return 3;
  if (path === 'personal-data/erase') return 4;
  return 1;
}

describeEachBackend(
  'the OpenAPI document, imported as Postman imports it',
  (ctx) => {
    it('every request of the imported collection, sent as built from the examples, gets a documented 2xx', async () => {
      const tenant = await ctx.tenant();
      const document = (await ctx.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json();
      const requests = (await imported(document)).sort((a, b) => phase(a) - phase(b));
      const operations = Object.values(document.paths as Record<string, object>).flatMap((path) => Object.keys(path));
      assert.equal(requests.length, operations.length, 'one request per operation');

      // The values a Postman user sets for the path variables, from the answers of the creates.
      const ids = new Map<string, string>();
      const variable = (resource: string, name: string): string => {
        const value = ids.get(name === 'id' ? resource : name);
        assert.ok(value, `nothing created yet for :${name} of ${resource}`);
        return value;
      };
      const sent: string[] = [];
      const exportDone = (url: string) =>
        waitFor(async () => {
          const read = await ctx.request('GET', url, { token: tenant.token });
          return read.body.status === 'succeeded' ? true : undefined;
        });
      /** The example's body with two records of the tenant in place of its ids. */
      const mergeBody = async (resource: string, raw: string | undefined) => {
        const example = JSON.parse(raw ?? '{}');
        const made = [];
        for (const n of [1, 2]) {
          const record = {
            name: `Merged ${n}`,
            email: `merged-${resource}-${n}@example.com`,
            phone: `+55 11 5555-000${n}`,
          };
          made.push((await ctx.request('POST', `${API}/${resource}`, { token: tenant.token, body: record })).body._id);
        }
        const [targetId, sourceId] = made;
        return JSON.stringify({ ...example, targetId, sourceIds: [sourceId], fields: { phone: sourceId } });
      };
      for (const request of requests) {
        const segments = request.url.path ?? [];
        const resource = segments[0] ?? '';
        const path = segments.map((segment) =>
          segment.startsWith(':') ? variable(resource, segment.slice(1)) : segment,
        );
        const query = new URLSearchParams(
          (request.url.query ?? []).filter((q) => !q.disabled).map((q): [string, string] => [q.key, q.value]),
        );
        const headers = Object.fromEntries(
          (request.header ?? [])
            .filter((h) => !h.disabled)
            .map((h): [string, string] => [h.key.toLowerCase(), h.value]),
        );
        const url = `${API}/${path.join('/')}${query.size ? `?${query}` : ''}`;
        // A merge's example names records of the document's own; a user names theirs, as here.
        const body = path.at(-1) === 'merge' ? await mergeBody(resource, request.body?.raw) : request.body?.raw;
        // An export's file is there once the export has succeeded, as its 409 says: a user waits for it.
        if (segments.join('/') === 'exports/:id/file') await exportDone(`${API}/exports/${variable(resource, 'id')}`);
        const answer = await ctx.request(request.method as 'GET', url, {
          token: tenant.token,
          headers,
          ...(body ? { body } : {}),
        });
        if (path.at(-1) === 'merge') ids.set('merges', answer.body.merge?.id);
        const what = `${request.method} /${segments.join('/')} → ${answer.status}`;
        // The example's import of one row may be over before its cancel comes: the documented 409.
        const over = segments.join('/') === 'imports/:id/cancel' && answer.status === 409;
        assert.ok((answer.status >= 200 && answer.status < 300) || over, `${what}: ${answer.text.slice(0, 500)}`);
        sent.push(what);
        if (request.method === 'POST' && segments.length === 1) {
          ids.set(resource, answer.body._id ?? answer.body.id);
          if (resource === 'fields') ids.set('resource', answer.body.resource).set('key', answer.body.key);
        }
        if (segments.at(-1) === 'test') ids.set('deliveryId', answer.body.id);
      }
      assert.equal(sent.length, operations.length);
    });
  },
  // The example's webhook URL is a public name; this machine may look up none. Checking targets
  // for private addresses (which looks the name up) has tests of its own.
  { FUNIL_WEBHOOKS_ALLOW_PRIVATE: 'true' },
);
