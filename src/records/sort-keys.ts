import { sql } from 'kysely';
import type { SortKey } from '../db/keyset.js';

/** The sorts every list has (SPEC §6), each as its index is built (migrations 2026-11-21T1000 and T1200). */
export const RECORD_SORT_KEYS = {
  createdAt: { expression: sql`created_at`, type: 'timestamptz', valueOf: (item) => item.createdAt },
  updatedAt: { expression: sql`updated_at`, type: 'timestamptz', valueOf: (item) => item.updatedAt },
  name: { expression: sql`name`, type: 'text', valueOf: (item) => item.name },
} as const satisfies Record<string, SortKey<{ createdAt: string; updatedAt: string; name: string }>>;

/** The filters every list has (SPEC §6), by their name in the query string; `q` is the search. */
export const RECORD_FILTERS = {
  statuses: { column: 'status', operator: 'in' },
  email: { column: 'email', operator: '=', narrow: true },
  externalId: { column: 'externalId', operator: '=', narrow: true },
  updatedSince: { column: 'updatedAt', operator: '>=', timestamp: true, boundsSort: RECORD_SORT_KEYS.updatedAt },
  createdSince: { column: 'createdAt', operator: '>=', timestamp: true, boundsSort: RECORD_SORT_KEYS.createdAt },
  // `custom.<key>=value` filters, as one object of the values they want (SPEC §16). Narrow: served by
  // the GIN index led by the tenant (SPEC §16: never a scan of the tenant's rows), however many match.
  custom: { column: 'custom', operator: '@>', json: true, narrow: true },
} as const;

/** What `q` searches: a case-insensitive substring of name, e-mail or phone (SPEC §6). */
export const SEARCH_COLUMNS = ['name', 'email', 'phone'] as const;
