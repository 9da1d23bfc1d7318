import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { exportRepository } from '../../src/exports/export.repository.js';
import { newId } from '../../src/shared/ids.js';
import { API, type TestContext, type TestTenant } from '../helpers/test-app.js';
import { waitFor } from '../helpers/wait-for.js';

/** RFC 4180 parsed back: rows of cells (CRLF line ends, quotes doubled inside quoted cells). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += char;
  }
  assert.equal(cell, '', 'the file ends with a line end');
  return rows;
}

/** A CSV's rows as objects keyed by its header. */
export function csvObjects(text: string): Record<string, string>[] {
  const [header = [], ...rows] = parseCsv(text);
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
}

/** Starts an export and waits for it to succeed; answers its id. */
export async function exported(ctx: TestContext, tenant: TestTenant, body: Record<string, unknown>): Promise<string> {
  const created = await ctx.api(tenant, 'POST', '/exports', { body });
  assert.equal(created.status, 202, created.text);
  assert.equal(created.headers.location, `/exports/${created.body.id}`);
  await waitFor(async () => {
    const state = await ctx.api(tenant, 'GET', `/exports/${created.body.id}`);
    assert.notEqual(state.body.status, 'failed');
    return state.body.status === 'succeeded' ? state.body : undefined;
  });
  return created.body.id;
}

/** The file of an export, with or without gzip: its headers and its text. */
export async function fileOf(ctx: TestContext, token: string, id: string, gzip = false) {
  const response = await ctx.app.inject({
    method: 'GET',
    url: `${API}/exports/${id}/file`,
    headers: { authorization: `Bearer ${token}`, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) },
  });
  const raw = response.rawPayload;
  const text =
    response.headers['content-encoding'] === 'gzip' ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
  return { status: response.statusCode, headers: response.headers, text, raw };
}

/** An export written straight to the table, queued, for a test to run its own way: `[sort, fields…]`. */
export function queuedExport(
  ctx: TestContext,
  tenant: TestTenant,
  format: 'csv' | 'ndjson',
  [sort, ...fields]: string[],
) {
  return exportRepository.create(ctx.db, tenant.id, {
    id: newId(),
    resource: 'lead',
    format,
    query: { sort },
    fields,
    tokenId: tenant.tokenId,
  });
}
