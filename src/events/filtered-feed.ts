import type { Db } from '../db/database.js';
import type { EventFamily } from './change-events.js';
import { EventRepository, type EventRow, type Position } from './event.repository.js';
import type { CompiledFilter, FilteredEvent } from './event-filter.js';

/** A page of the feed; `next` is where the following page starts, whenever more may follow. */
export interface FeedPage<E> {
  events: E[];
  more: boolean;
  next?: string | undefined;
}

export interface FilteredFeedRequest {
  tenantId: string;
  after: Position | undefined;
  /** The types the token may read, narrowed by `types=`; the filter's own narrow them further. */
  types: readonly string[];
  /** The families the reader may read (a job's events of other resources are left out). */
  families: readonly EventFamily[];
  objectId?: string | undefined;
  limit: number;
  filter: CompiledFilter;
  /** Who "self" is: the token reading the feed. */
  self: string | null;
}

/** Events a filtered page reads at most before it answers, short or empty, with the place to go on from. */
const READ_AT_MOST = 1_000;

/**
 * A page of the feed through a filter (SPEC §22). The types it names and the tokens it excludes
 * are left out by the statement; `changedFields` and `where` are tested on each event as the
 * feed shows it. A page ends when it is full, when the feed has no more, or after READ_AT_MOST
 * events: then it may be short, or empty, and `next` is the id of the last event it read, shown
 * or not, so that paging on by it skips what was read and misses nothing. The feed's order and
 * its guarantee (SPEC §14) are the unfiltered feed's: every event read is one the feed would
 * show, in the same order.
 */
export async function readFilteredFeed<E extends FilteredEvent & { id: string }>(
  handle: Db,
  request: FilteredFeedRequest,
  render: (row: EventRow) => E,
  idOf: (position: Position) => string,
): Promise<FeedPage<E>> {
  const { filter, self, limit } = request;
  const named = filter.types;
  const types = named ? request.types.filter((type) => named.includes(type)) : request.types;
  if (types.length === 0) return { events: [], more: false };
  const excludeTokens = filter.excludedTokens(self);
  // A page's worth first, as the unfiltered feed reads; for a sparse filter, twice as many each
  // time after, up to READ_AT_MOST in all.
  let batch = limit + 1;
  const repository = new EventRepository(handle);
  const events: E[] = [];
  let after = request.after;
  let read = 0;
  for (;;) {
    const rows = await repository.feed(request.tenantId, {
      after,
      types,
      families: request.families,
      objectId: request.objectId,
      excludeTokens,
      limit: batch,
    });
    for (const [index, row] of rows.entries()) {
      after = { xid: row.xid, seq: row.seq };
      read++;
      const event = render(row);
      if (!filter.matches(event)) continue;
      events.push(event);
      if (events.length === limit) {
        const more = index < rows.length - 1 || rows.length === batch;
        return { events, more, next: more ? event.id : undefined };
      }
    }
    if (rows.length < batch || !after) return { events, more: false };
    if (read >= READ_AT_MOST) return { events, more: true, next: idOf(after) };
    batch = Math.min(batch * 2, READ_AT_MOST - read);
  }
}
