import type { FastifyReply, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { fitsSortKey, type KeysetPage, type SortKey } from '../db/keyset.js';
import type { CursorCodec } from './cursor.js';
import { cursorBinding } from './cursor.js';
import { validationFailed } from './errors.js';
import { fieldMessage, fieldMessages } from './messages.js';
import { setNextPage } from './next-page.js';
import { StringEnum, TrimmedString } from './schemas.js';

/** The query parameters both lists share (SPEC §6); each list adds its own filters. */
export function listQueryFields<const F extends readonly string[]>(sortFields: F) {
  const sorts = sortFields.flatMap((field) => [field, `-${field}`]);
  return {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Rows per page (1–1000).' }),
    ),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: 'Opaque: the X-Next-Cursor of the previous page.' }),
    ),
    sort: Type.Optional(
      StringEnum(sorts, { default: '-createdAt', description: 'Sort field; a `-` prefix sorts descending.' }),
    ),
    status: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'Comma-separated statuses.',
        examples: ['new,qualified'],
      }),
    ),
    email: Type.Optional(
      TrimmedString({ minLength: 1, maxLength: 254, lowercase: true, description: 'Exact e-mail, any case.' }),
    ),
    q: Type.Optional(
      TrimmedString({ minLength: 1, maxLength: 200, description: 'Substring of name, e-mail or phone, any case.' }),
    ),
    updatedSince: Type.Optional(Type.String({ format: 'date-time', description: 'Updated at or after (ISO 8601).' })),
    createdSince: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after (ISO 8601).' })),
  } satisfies Record<string, TSchema>;
}

/** `status=new,won` → ['new', 'won'], each one checked against the allowed list. */
export function statusList(raw: string | undefined, allowed: readonly string[]): string[] | undefined {
  if (raw === undefined) return undefined;
  const statuses = [...new Set(raw.split(',').map((status) => status.trim()))].sort();
  if (statuses.some((status) => !allowed.includes(status))) {
    throw validationFailed([{ field: 'status', message: fieldMessage('status', fieldMessages.oneOf(allowed)) }]);
  }
  return statuses;
}

export function parseSort<F extends string>(sort: string | undefined): { field: F; descending: boolean } {
  const value = sort ?? '-createdAt';
  const descending = value.startsWith('-');
  return { field: (descending ? value.slice(1) : value) as F, descending };
}

export interface ListRequest<Item> {
  tenantId: string;
  sort: string;
  key: SortKey<Item>;
  descending: boolean;
  limit: number;
  cursor: string | undefined;
  /** The filters as the client sent them, normalised: a cursor is valid only for the same ones. */
  filters: object;
  fetch(page: KeysetPage<Item>): Promise<Item[]>;
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
  const items = await list.fetch({ key: list.key, descending: list.descending, limit: list.limit, after });
  if (items.length <= list.limit) return items;
  const page = items.slice(0, list.limit);
  const last = page[page.length - 1] as Item;
  setNextPage(request, reply, await cursors.encode({ value: list.key.valueOf(last), id: last._id }, binding));
  return page;
}
