import type { Db } from '../db/database.js';
import { fitsSortKey, type KeysetPage, type ListedRows, type SortKey } from '../db/keyset.js';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { type CursorCodec, cursorBinding } from './cursor.js';

export interface ListRequest<Item> {
  tenantId: string;
  sort: string;
  key: SortKey<Item>;
  descending: boolean;
  limit: number;
  cursor: string | undefined;
  /** The filters as the client sent them, normalised: a cursor is valid only for the same ones. */
  filters: object;
  fetch(page: KeysetPage<Item>): Promise<ListedRows<Item>>;
}

/** One keyset page, and the cursor of the next one when more rows follow. */
export async function readPage<Item extends { _id: string }>(
  cursors: CursorCodec,
  list: ListRequest<Item>,
): Promise<{ items: Item[]; next: string | undefined }> {
  const binding = cursorBinding(list.tenantId, list.sort, list.filters);
  const after = list.cursor === undefined ? undefined : await cursors.decode(list.cursor, binding);
  if (after && !fitsSortKey(after, list.key as SortKey<unknown>)) {
    throw validationFailed([{ field: 'cursor', message: fieldMessage('cursor', fieldMessages.invalid()) }]);
  }
  const { items, resumeAfter } = await list.fetch({
    key: list.key,
    descending: list.descending,
    limit: list.limit,
    after,
  });
  const page = items.length > list.limit ? items.slice(0, list.limit) : items;
  // More rows follow the page, or the page stopped at its scan bound: resume after what it read.
  const last = items.length > list.limit ? page[page.length - 1] : resumeAfter;
  const next = last && (await cursors.encode({ value: list.key.valueOf(last), id: last._id }, binding));
  return { items: page, next };
}

export interface RecordListService<Item extends { _id: string }> {
  list(handle: Db, tenantId: string, filters: object, page: KeysetPage<Item>): Promise<ListedRows<Item>>;
}

/** What a resource's list needs (leads, customers): its service, its filters and its sort keys. */
export interface RecordLister<Item extends { _id: string }> {
  readonly service: RecordListService<Item>;
  /** The validated query as filters and a sort (each resource has filters of its own). */
  listRequest(query: Record<string, unknown>): {
    sort: { field: string; descending: boolean };
    filters: object;
    limit: number;
  };
  readonly sortKeys: Readonly<Record<string, SortKey<Item>>>;
}

/** A validated list query (REST's query string, or an MCP search's arguments) as one keyset page to read. */
export function listRequestOf<Item extends { _id: string }>(
  lister: RecordLister<Item>,
  handle: Db,
  tenantId: string,
  query: Record<string, unknown> & { sort?: string; cursor?: string },
): ListRequest<Item> {
  const { sort, filters, limit } = lister.listRequest(query);
  return {
    tenantId,
    sort: query.sort ?? '-createdAt',
    key: lister.sortKeys[sort.field] as SortKey<Item>,
    descending: sort.descending,
    limit,
    cursor: query.cursor,
    filters,
    fetch: (page) => lister.service.list(handle, tenantId, filters, page),
  };
}
