import { sql } from 'kysely';
import type { Db } from './database.js';

/** Where a walk of a tenant's rows stands: the last row it read, none before the first step. */
export interface WalkPosition {
  readonly afterCreatedAt: Date | null;
  readonly afterId: string | null;
}

/**
 * The next `limit` rows of a tenant in `table`, newest first, after `position`: one step of a
 * background walk that keeps its position between steps (the removal of a deleted field's values,
 * the moves of a removed stage's leads), read off the tenant's creation-time index.
 */
export async function nextRowsNewestFirst(
  handle: Db,
  table: 'leads' | 'customers',
  tenantId: string,
  position: WalkPosition,
  limit: number,
): Promise<{ id: string; createdAt: Date }[]> {
  const after =
    position.afterCreatedAt && position.afterId
      ? sql`and (created_at, id) < (${position.afterCreatedAt}, ${position.afterId}::uuid)`
      : sql``;
  const { rows } = await sql<{ id: string; createdAt: Date }>`
    select id, created_at from ${sql.table(table)}
    where tenant_id = ${tenantId} ${after}
    order by created_at desc, id desc
    limit ${limit}`.execute(handle);
  return rows;
}
