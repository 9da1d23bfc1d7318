import assert from 'node:assert/strict';
import type { Answer, TestContext, TestTenant } from '../helpers/test-app.js';
import { API } from '../helpers/test-app.js';
import { waitFor } from '../helpers/wait-for.js';

// biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
export type Json = any;

export const CSV = 'text/csv';
export const NDJSON = 'application/x-ndjson';

/** `POST /imports` with `file` as the body, as a client uploads it. */
export function upload(
  ctx: TestContext,
  token: string,
  file: string | Buffer,
  query: string,
  contentType = CSV,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return ctx.app
    .inject({
      method: 'POST',
      url: `${API}/imports?${query}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType, ...headers },
      payload: file,
    })
    .then((response) => {
      const text = response.body;
      const json = String(response.headers['content-type'] ?? '').startsWith('application/json');
      return { status: response.statusCode, headers: response.headers, body: json ? JSON.parse(text) : text, text };
    });
}

/** Uploads `file` and waits until its import is over; the import as `GET /imports/{id}` shows it then. */
export async function imported(
  ctx: TestContext,
  tenant: TestTenant,
  file: string | Buffer,
  query: string,
  contentType = CSV,
): Promise<Json> {
  const accepted = await upload(ctx, tenant.token, file, query, contentType);
  assert.equal(accepted.status, 202, accepted.text);
  return importOver(ctx, tenant, accepted.body.id);
}

/** The import once it is over (and its revert, when one runs). */
export function importOver(ctx: TestContext, tenant: TestTenant, id: string, timeoutMs = 30_000): Promise<Json> {
  return waitFor(async () => {
    const read = await ctx.api(tenant, 'GET', `/imports/${id}`);
    assert.equal(read.status, 200, read.text);
    const over = ['succeeded', 'failed', 'cancelled'].includes(read.body.status);
    const reverting = read.body.revert?.status === 'running';
    return over && !reverting ? read.body : undefined;
  }, timeoutMs);
}

/** Every fault of an import, page by page. */
export async function faultsOf(ctx: TestContext, tenant: TestTenant, id: string, query = ''): Promise<Json[]> {
  const faults: Json[] = [];
  let cursor: string | undefined;
  do {
    const page = await ctx.api(
      tenant,
      'GET',
      `/imports/${id}/errors?limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`,
    );
    assert.equal(page.status, 200, page.text);
    faults.push(...page.body);
    cursor = page.headers['x-next-cursor'] as string | undefined;
  } while (cursor);
  return faults;
}
