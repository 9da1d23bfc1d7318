import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { TenantTable } from '../db/tables.js';
import { newId } from '../shared/ids.js';

export type TenantRow = Selectable<TenantTable>;

const TENANT_COLUMNS = ['id', 'name', 'active', 'phoneCountry', 'createdAt', 'updatedAt'] as const;

export class TenantRepository {
  constructor(private readonly db: Db) {}

  list(): Promise<TenantRow[]> {
    return this.db.selectFrom('tenants').select(TENANT_COLUMNS).orderBy('createdAt').orderBy('id').execute();
  }

  find(id: string): Promise<TenantRow | undefined> {
    return this.db.selectFrom('tenants').select(TENANT_COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  create(name: string, phoneCountry?: string): Promise<TenantRow> {
    return this.db
      .insertInto('tenants')
      .values({ id: newId(), name, ...(phoneCountry === undefined ? {} : { phoneCountry }) })
      .returning(TENANT_COLUMNS)
      .executeTakeFirstOrThrow();
  }

  update(
    id: string,
    patch: { name?: string; active?: boolean; phoneCountry?: string },
  ): Promise<TenantRow | undefined> {
    return this.db
      .updateTable('tenants')
      .set({ ...patch, updatedAt: sql<Date>`now()` })
      .where('id', '=', id)
      .returning(TENANT_COLUMNS)
      .executeTakeFirst();
  }

  async isEmpty(): Promise<boolean> {
    const row = await this.db.selectFrom('tenants').select('id').limit(1).executeTakeFirst();
    return row === undefined;
  }
}

/** The country each tenant's phones are read in (SPEC §21), as one statement reads it. */
export async function phoneCountryOf(handle: Db, tenantId: string): Promise<string | undefined> {
  const row = await handle.selectFrom('tenants').select('phoneCountry').where('id', '=', tenantId).executeTakeFirst();
  return row?.phoneCountry;
}
