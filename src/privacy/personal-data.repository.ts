import type { Db } from '../db/database.js';

/** Where a person's records are (SPEC §17): the statement takes the tenant first. */
export class PersonalDataRepository {
  /** The ids of the tenant's leads or customers with this e-mail, oldest first. */
  async recordIds(handle: Db, tenantId: string, table: 'leads' | 'customers', email: string): Promise<string[]> {
    const rows = await handle
      .selectFrom(table)
      .select('id')
      .where('tenantId', '=', tenantId)
      .where('email', '=', email)
      .orderBy('createdAt')
      .execute();
    return rows.map((row) => row.id);
  }
}
