import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export type MatchKind = 'email' | 'phone';
export type RecordTable = 'leads' | 'customers';

/** The most ids a group lists; its count is the whole. */
export const GROUP_IDS = 100;
/** The most records `/:id/duplicates` lists. */
export const RECORD_DUPLICATES = 100;

export interface DuplicateGroup {
  readonly kind: MatchKind;
  readonly value: string;
  readonly count: number;
  readonly ids: string[];
}

/** Where a page of groups starts: after this group, in the order of the list (largest first). */
export interface GroupPosition {
  readonly count: number;
  readonly kind: MatchKind;
  readonly value: string;
}

const COLUMN: Readonly<Record<MatchKind, string>> = { email: 'match_email', phone: 'match_phone' };

/**
 * SPEC §21: the tenant's records that share a matching key, as groups, largest first (then by
 * kind and key): read off the per-tenant indexes of the keys (migration 2026-11-28T1100), the
 * records with no key not read at all.
 */
export async function duplicateGroups(
  handle: Db,
  table: RecordTable,
  tenantId: string,
  { kinds, after, limit }: { kinds: readonly MatchKind[]; after: GroupPosition | undefined; limit: number },
): Promise<DuplicateGroup[]> {
  // First the page's keys and sizes, counted off the indexes alone; then the ids of those keys only.
  const counts = kinds.map((kind) => {
    const column = sql.ref(COLUMN[kind]);
    return sql`
      select ${kind}::text as kind, ${column} as value, count(*)::int as count
      from ${sql.table(table)} where tenant_id = ${tenantId} and ${column} is not null
      group by ${column} having count(*) > 1`;
  });
  // Largest first: a position compares as (-count, kind, value), ascending.
  const past = after
    ? sql`where (-g.count, g.kind, g.value) > (${-after.count}::int, ${after.kind}::text, ${after.value}::text)`
    : sql``;
  const { rows: page } = await sql<Omit<DuplicateGroup, 'ids'>>`
    select g.kind, g.value, g.count from (${sql.join(counts, sql` union all `)}) as g ${past}
    order by g.count desc, g.kind, g.value
    limit ${limit}`.execute(handle);
  const ids = new Map<string, string[]>();
  for (const kind of kinds) {
    const values = page.filter((group) => group.kind === kind).map((group) => group.value);
    if (values.length === 0) continue;
    const column = sql.ref(COLUMN[kind]);
    const { rows } = await sql<{ value: string; ids: string[] }>`
      select ${column} as value, (array_agg(id order by id))[1:${sql.lit(GROUP_IDS)}] as ids
      from ${sql.table(table)} where tenant_id = ${tenantId} and ${column} = any(${values}::text[])
      group by ${column}`.execute(handle);
    for (const row of rows) ids.set(`${kind}:${row.value}`, row.ids);
  }
  return page.map((group) => ({ ...group, ids: ids.get(`${group.kind}:${group.value}`) ?? [] }));
}

/**
 * The ids of the tenant's other records that share a key with `id`, and which keys, newest first;
 * undefined when the tenant has no such record.
 */
export async function duplicatesOf(
  handle: Db,
  table: RecordTable,
  tenantId: string,
  id: string,
): Promise<{ id: string; matchedOn: MatchKind[] }[] | undefined> {
  const { rows: found } = await sql<{ matchEmail: string | null; matchPhone: string | null }>`
    select match_email, match_phone from ${sql.table(table)} where tenant_id = ${tenantId} and id = ${id}`.execute(
    handle,
  );
  const record = found[0];
  if (!record) return undefined;
  if (record.matchEmail === null && record.matchPhone === null) return [];
  const { rows } = await sql<{ id: string; byEmail: boolean; byPhone: boolean }>`
    select id, match_email is not distinct from ${record.matchEmail}::text and match_email is not null as by_email,
      match_phone is not distinct from ${record.matchPhone}::text and match_phone is not null as by_phone
    from ${sql.table(table)}
    where tenant_id = ${tenantId} and id <> ${id}
      and (match_email = ${record.matchEmail}::text or match_phone = ${record.matchPhone}::text)
    order by created_at desc, id desc
    limit ${RECORD_DUPLICATES}`.execute(handle);
  return rows.map((row) => ({
    id: row.id,
    matchedOn: [...(row.byEmail ? ['email' as const] : []), ...(row.byPhone ? ['phone' as const] : [])],
  }));
}
