import assert from 'node:assert/strict';
import type { Answer, TestContext } from './test-app.js';

/** How a client follows pages (SPEC §6): the `Link` URL verbatim, or `cursor=` from `X-Next-Cursor`. */
export type Follow = 'link' | 'cursor';

export interface Walk {
  // biome-ignore lint/suspicious/noExplicitAny: list items are whatever JSON the API answered.
  items: any[];
  /** Items per page, in order. */
  pageSizes: number[];
  /** The first page's answer, headers included. */
  first: Answer;
}

/** The URL of `Link: <…>; rel="next"`, or undefined when the header is absent. */
export function nextLink(res: Answer): URL | undefined {
  const header = res.headers.link;
  if (header === undefined) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(String(header));
  assert.ok(match, `Link header is not <url>; rel="next": ${String(header)}`);
  return new URL(match[1] as string);
}

/**
 * Walks a list to its end and checks the SPEC §6 paging headers on every page: a page that has a
 * successor carries both `Link` and `X-Next-Cursor` (naming the same cursor), the last page neither.
 */
export async function walk(
  ctx: TestContext,
  token: string,
  path: string,
  query: Record<string, string>,
  follow: Follow,
  maxPages = 1000,
): Promise<Walk> {
  const items: Walk['items'] = [];
  const pageSizes: number[] = [];
  let res = await ctx.request('GET', path, { token, query });
  const first = res;
  for (let page = 0; page < maxPages; page++) {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(Array.isArray(res.body));
    items.push(...res.body);
    pageSizes.push(res.body.length);
    const link = nextLink(res);
    const cursor = res.headers['x-next-cursor'];
    if (link === undefined) {
      assert.equal(cursor, undefined, 'X-Next-Cursor without Link');
      return { items, pageSizes, first };
    }
    assert.equal(typeof cursor, 'string', 'Link without X-Next-Cursor');
    assert.equal(link.searchParams.get('cursor'), cursor, 'Link and X-Next-Cursor name different cursors');
    assert.equal(link.pathname, path, 'Link points at another path');
    res =
      follow === 'link'
        ? await ctx.request('GET', `${link.pathname}${link.search}`, { token })
        : await ctx.request('GET', path, { token, query: { ...query, cursor: String(cursor) } });
  }
  assert.fail(`more than ${maxPages} pages`);
}

export const ids = (items: { _id: string }[]) => items.map((item) => item._id);

/** Asserts no id appears twice. */
export function assertEachOnce(items: { _id: string }[]): void {
  const seen = new Set<string>();
  for (const { _id } of items) {
    assert.ok(!seen.has(_id), `row ${_id} listed twice`);
    seen.add(_id);
  }
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Changes the character at `index` to its neighbour in the base64url alphabet (lowest bit flipped),
 * the smallest forgery there is: in a last character it may touch only padding bits.
 */
export function flipChar(text: string, index: number): string {
  const position = BASE64URL.indexOf(text[index] as string);
  const other = position < 0 ? 'A' : BASE64URL[position ^ 1];
  return `${text.slice(0, index)}${other}${text.slice(index + 1)}`;
}
