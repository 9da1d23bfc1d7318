/**
 * The change feed's read throughput (SPEC §14): one reader walks a tenant's whole feed from its
 * start with `limit=1000`, following `X-Next-Cursor` page after page, as a sync client catching up
 * does. Runs after the workloads, whose writes (W1, W3, W5–W7) made the events it reads.
 */
import { API } from './workloads.js';

export interface FeedDrain {
  events: number;
  pages: number;
  seconds: number;
  eventsPerSec: number;
  pageP50Ms: number;
  pageMaxMs: number;
}

export const FEED_PAGE = 1000;

export async function drainFeed(baseUrl: string, token: string): Promise<FeedDrain> {
  const pageMs: number[] = [];
  let events = 0;
  let after: string | null = null;
  const started = performance.now();
  do {
    const url = new URL(`${API}/events`, baseUrl);
    url.searchParams.set('limit', String(FEED_PAGE));
    if (after) url.searchParams.set('after', after);
    const asked = performance.now();
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const page = (await response.json()) as unknown[];
    if (!response.ok || !Array.isArray(page))
      throw new Error(`GET /events: ${response.status} ${JSON.stringify(page)}`);
    pageMs.push(performance.now() - asked);
    events += page.length;
    after = response.headers.get('x-next-cursor');
  } while (after);
  const seconds = (performance.now() - started) / 1000;
  pageMs.sort((a, b) => a - b);
  return {
    events,
    pages: pageMs.length,
    seconds,
    eventsPerSec: events / seconds,
    pageP50Ms: pageMs[Math.floor(pageMs.length / 2)] ?? 0,
    pageMaxMs: pageMs[pageMs.length - 1] ?? 0,
  };
}
