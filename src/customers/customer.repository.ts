import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { SortKey } from '../db/keyset.js';
import { MATCH_KEY_COLUMNS } from '../records/match-key-rules.js';
import { RecordStore } from '../records/record-store.js';
import { RECORD_FILTERS, RECORD_SORT_KEYS, SEARCH_COLUMNS } from '../records/sort-keys.js';
import { customerFields } from './customer.fields.js';
import type { Customer } from './customer.schemas.js';

export interface CustomerFilters {
  statuses?: string[] | undefined;
  type?: string | undefined;
  email?: string | undefined;
  externalId?: string | undefined;
  q?: string | undefined;
  updatedSince?: string | undefined;
  createdSince?: string | undefined;
  /** `custom.<key>=value` filters, as `[key, text]` pairs (SPEC §16). */
  custom?: [string, string][] | undefined;
}

export type CustomerSortField = 'createdAt' | 'updatedAt' | 'name';

export const CUSTOMER_SORT_KEYS: Record<CustomerSortField, SortKey<Customer>> = RECORD_SORT_KEYS;

/** The unique index behind SPEC §4's "unique per tenant". */
export const CUSTOMER_EMAIL_KEY = 'customers_tenant_email_key';
/** SPEC §13: an external id is unique per tenant and resource. */
export const CUSTOMER_EXTERNAL_ID_KEY = 'customers_tenant_external_id_key';

/** The customers of each tenant: every statement takes the tenant first (RecordStore). */
export function customerStore(db: Db, scanRows?: number): RecordStore {
  return new RecordStore(db, {
    table: 'customers',
    events: 'customer',
    columns: customerFields.rowColumns,
    listSelection: customerFields.listSelection,
    insertColumns: [...customerFields.writableColumns, ...MATCH_KEY_COLUMNS, 'id', 'tenantId'],
    derived: {
      // An update that sets only first or last name rebuilds `name` from both as stored after it
      // (SPEC §4); both parts cleared leave the name as it was: a name cannot be cleared.
      nameFromParts: (set, values) => {
        const first = set.includes('firstName') ? sql`${values.firstName}::text` : sql.ref('firstName');
        const last = set.includes('lastName') ? sql`${values.lastName}::text` : sql.ref('lastName');
        return { name: sql`coalesce(nullif(left(concat_ws(' ', ${first}, ${last}), 200), ''), ${sql.ref('name')})` };
      },
    },
    filters: { ...RECORD_FILTERS, type: { column: 'type', operator: '=' } },
    merged: ['custom'],
    searchColumns: SEARCH_COLUMNS,
    scanRows,
  });
}
