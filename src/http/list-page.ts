import type { FastifyReply, FastifyRequest } from 'fastify';
import { fitsSortKey, type KeysetPage, type ListedRows, type SortKey } from '../db/keyset.js';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { type CursorCodec, cursorBinding } from './cursor.js';
import { setNextPage } from './next-page.js';

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

/** Runs one keyset page and, when more rows follow, sets the next-page headers. */
export async function listPage<Item extends { _id: string }>(
  request: FastifyRequest,
  reply: FastifyReply,
  cursors: CursorCodec,
  list: ListRequest<Item>,
): Promise<Item[]> {
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
  if (last) {
    setNextPage(request, reply, await cursors.encode({ value: list.key.valueOf(last), id: last._id }, binding));
  }
  return page;
}
