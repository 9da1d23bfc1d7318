import { setTimeout } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';

/**
 * Waits (up to 10 s) until every event of the tenant (without one, of the database) can show in
 * the feed: a transaction open anywhere on the server, another test file's included, holds back
 * the events committed after it began (SPEC §14's commit order).
 */
export async function feedSettled(db: Db, tenantId?: string): Promise<void> {
  const ofTenant = tenantId === undefined ? sql`true` : sql`tenant_id = ${tenantId}`;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await sql<{ held: boolean }>`
      select exists (select 1 from events where ${ofTenant}
        and xid >= pg_snapshot_xmin(pg_current_snapshot())) as held`.execute(db);
    if (!rows[0]?.held) return;
    await setTimeout(10);
  }
}
