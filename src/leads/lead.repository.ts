import { type Selectable, sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { LeadTable } from '../db/tables.js';
import { newId } from '../shared/ids.js';

export type LeadRow = Selectable<LeadTable>;

export interface LeadValues {
  name: string;
  email: string | null;
  phone: string | null;
  source: string | null;
  status: string;
  score: number;
  lastContact: Date | null;
  notes: string | null;
}

export interface LeadListOptions {
  limit: number;
}

const LEAD_COLUMNS = [
  'id',
  'tenantId',
  'name',
  'email',
  'phone',
  'source',
  'status',
  'score',
  'lastContact',
  'notes',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const;

const LIST_COLUMNS = [
  'id',
  'name',
  'email',
  'status',
  'score',
  'lastContact',
  'source',
  'createdAt',
  'updatedAt',
] as const;

/** Every query takes the tenant first: a lead of another tenant does not exist here. */
export class LeadRepository {
  constructor(private readonly db: Db) {}

  /** The one place lists are queried; paging and filters belong here. */
  list(tenantId: string, options: LeadListOptions) {
    return this.db
      .selectFrom('leads')
      .select(LIST_COLUMNS)
      .where('tenantId', '=', tenantId)
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .limit(options.limit)
      .execute();
  }

  find(tenantId: string, id: string): Promise<LeadRow | undefined> {
    return this.db
      .selectFrom('leads')
      .select(LEAD_COLUMNS)
      .where('tenantId', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  create(tenantId: string, createdBy: string, values: LeadValues): Promise<LeadRow> {
    return this.db
      .insertInto('leads')
      .values({ ...values, id: newId(), tenantId, createdBy })
      .returning(LEAD_COLUMNS)
      .executeTakeFirstOrThrow();
  }

  /** Updates in one statement; undefined when the lead is not in the tenant. */
  update(tenantId: string, id: string, patch: Partial<LeadValues>): Promise<LeadRow | undefined> {
    return this.db
      .updateTable('leads')
      .set({ ...patch, updatedAt: sql<Date>`now()` })
      .where('tenantId', '=', tenantId)
      .where('id', '=', id)
      .returning(LEAD_COLUMNS)
      .executeTakeFirst();
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('leads')
      .where('tenantId', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
