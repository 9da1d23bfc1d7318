import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import { sql } from 'kysely';
import type { LeadTable } from '../../src/db/tables.js';
import { newId } from '../../src/shared/ids.js';
import type { TestContext, TestTenant } from '../helpers/test-app.js';

export const STATUSES = ['new', 'contacted', 'qualified', 'proposal', 'negotiation', 'won', 'lost'] as const;

/** Few distinct names, cases and accents: many ties, and an order that depends on the collation. */
const NAMES = ['Ana', 'ana', 'Álvaro', 'Bruno', 'bruno silva', 'Zoe', 'Émile', '100% Real', 'under_score', 'Maria'];

/** Each sort of SPEC §6 as SQL, written independently of the repository, for the expected order. */
export const LEAD_SORT_SQL = {
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  name: 'name',
  score: 'score',
  lastContact: "coalesce(last_contact, '-infinity'::timestamptz)",
} as const;
export type LeadSort = keyof typeof LEAD_SORT_SQL;

/**
 * Inserts `count` leads in one statement: varied names, scores, statuses and sources, a null
 * lastContact on every fourth, and few distinct values per sort, so that pages end inside runs of
 * equal values and only the id orders them. Ids mix UUIDv7 and v4: the id order is not the insert order.
 */
export async function insertLeads(
  ctx: TestContext,
  tenant: TestTenant,
  count: number,
  label = 'lead',
): Promise<string[]> {
  const rows: Insertable<LeadTable>[] = Array.from({ length: count }, (_, i) => ({
    id: i % 2 === 0 ? newId() : randomUUID(),
    tenantId: tenant.id,
    name: NAMES[(i * 7) % NAMES.length] as string,
    email: i % 5 === 0 ? null : `${label}${i}@example.com`,
    phone: i % 5 === 0 || i % 3 === 0 ? `+55 11 9${String(i).padStart(4, '0')}-0000` : null,
    source: ['form', 'ads', 'partner', null, 'form', 'web form'][i % 6] ?? null,
    status: STATUSES[i % STATUSES.length] as string,
    score: ((i * 37) % 11) * 10,
    lastContact: i % 4 === 0 ? null : new Date(Date.UTC(2026, 0, 10, i % 9)),
    createdBy: tenant.tokenId,
    updatedAt: new Date(Date.UTC(2026, 1, 1, 0, (i * 7) % 23)),
  }));
  await ctx.db.insertInto('leads').values(rows).execute();
  // created_at is the database's own column (not insertable through the typed API): spread it here.
  await sql`update leads set created_at = timestamptz '2026-01-01T00:00:00Z' + ((score + length(name)) % 17) * interval '1 hour'
    where tenant_id = ${tenant.id}`.execute(ctx.db);
  return rows.map((row) => row.id);
}

/** The tenant's lead ids in the order of one SQL ORDER BY: the order every walk must reproduce. */
export async function expectedLeadOrder(ctx: TestContext, tenantId: string, sort: string): Promise<string[]> {
  const descending = sort.startsWith('-');
  const expression = LEAD_SORT_SQL[(descending ? sort.slice(1) : sort) as LeadSort];
  const direction = sql.raw(descending ? 'desc' : 'asc');
  const result = await sql<{ id: string }>`select id from leads where tenant_id = ${tenantId}
    order by ${sql.raw(expression)} ${direction}, id ${direction}`.execute(ctx.db);
  return result.rows.map((row) => row.id);
}
