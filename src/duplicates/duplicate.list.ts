import type { Db } from '../db/database.js';
import { type CursorCodec, cursorBinding } from '../records/cursor.js';
import type { Stored } from '../records/record.service.js';
import { notFound, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages, type Text } from '../shared/messages.js';
import {
  duplicateGroups,
  duplicatesOf,
  type GroupPosition,
  type MatchKind,
  type RecordTable,
} from './duplicate.repository.js';

const KINDS: readonly MatchKind[] = ['email', 'phone'];

/** A group as the API answers it (SPEC §21). */
export interface DuplicateGroupItem {
  readonly key: { readonly kind: MatchKind; readonly value: string };
  readonly count: number;
  readonly ids: string[];
}

/** Where a resource's records are, and how to read them whole: what both ways of listing duplicates need. */
export interface DuplicateRecords {
  readonly table: RecordTable;
  readonly notFoundText: Text;
  lookupMany(handle: Db, tenantId: string, ids: readonly string[]): Promise<Stored<unknown>[]>;
}

/**
 * One page of the tenant's groups of duplicates, and the cursor of the next while more follow. The
 * cursor is bound to the tenant, the table and `kind`, not to `limit`: REST's `GET
 * /<resource>/duplicates` and MCP's find_duplicates page alike, each taking the other's cursor.
 */
export async function duplicateGroupPage(
  handle: Db,
  cursors: CursorCodec,
  table: RecordTable,
  tenantId: string,
  query: { kind?: MatchKind | undefined; limit: number; cursor?: string | undefined },
): Promise<{ items: DuplicateGroupItem[]; next: string | undefined }> {
  const { kind, limit, cursor } = query;
  const binding = cursorBinding(tenantId, `duplicates:${table}`, { kind });
  const after = cursor === undefined ? undefined : positionOf(await cursors.decode(cursor, binding));
  const groups = await duplicateGroups(handle, table, tenantId, {
    kinds: kind ? [kind] : KINDS,
    after,
    limit: limit + 1,
  });
  const page = groups.slice(0, limit);
  const last = page.at(-1);
  const next =
    groups.length > limit && last
      ? await cursors.encode({ value: last.count, id: `${last.kind}:${last.value}` }, binding)
      : undefined;
  return { items: page.map(({ kind, value, count, ids }) => ({ key: { kind, value }, count, ids })), next };
}

/** The tenant's records that share a key with `id`, whole, each with the keys it shares; a 404 when it has no `id`. */
export async function duplicatesOfRecord(
  handle: Db,
  records: DuplicateRecords,
  tenantId: string,
  id: string,
): Promise<{ matchedOn: MatchKind[]; record: unknown }[]> {
  const matches = await duplicatesOf(handle, records.table, tenantId, id);
  if (!matches) throw notFound(records.notFoundText);
  const found = await records.lookupMany(
    handle,
    tenantId,
    matches.map((match) => match.id),
  );
  const byId = new Map(found.map((stored) => [(stored.object as { _id: string })._id, stored.object]));
  return matches.flatMap((match) => {
    const record = byId.get(match.id);
    return record ? [{ matchedOn: match.matchedOn, record }] : [];
  });
}

/** A decoded cursor as the group it names; a 400 naming `cursor` when it names none. */
function positionOf(position: { value: string | number | null; id: string }): GroupPosition {
  const colon = position.id.indexOf(':');
  const kind = position.id.slice(0, colon) as MatchKind;
  if (typeof position.value !== 'number' || !KINDS.includes(kind)) {
    throw validationFailed([{ field: 'cursor', message: fieldMessage('cursor', fieldMessages.invalid()) }]);
  }
  return { count: position.value, kind, value: position.id.slice(colon + 1) };
}
