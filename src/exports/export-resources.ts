import type { TSchema } from 'typebox';
import type { Scope } from '../auth/scopes.js';
import type { Db } from '../db/database.js';
import type { KeysetPage, ListedRows, SortKey } from '../db/keyset.js';
import type { ExportResource } from './export.schemas.js';

/** What an export reads of a resource: the list's own query rules and pages, and the full objects. */
export interface ExportSource {
  list(handle: Db, tenantId: string, filters: object, page: KeysetPage<never>): Promise<ListedRows<{ _id: string }>>;
  lookupMany(handle: Db, tenantId: string, ids: readonly string[]): Promise<{ object: object }[]>;
}

/** A resource as exports see it: the same schema, rules and sorts as its list route (SPEC §6). */
export interface ExportResourceSpec {
  readonly resource: ExportResource;
  readonly readScope: Scope;
  /** The list route's query-string schema. */
  readonly listQuery: TSchema;
  /** The list route's validated query as filters and a sort. */
  listRequest(query: Record<string, unknown>): { sort: { field: string; descending: boolean }; filters: object };
  readonly sortKeys: Readonly<Record<string, SortKey<never>>>;
  /** The fields of the full object, in its order. */
  readonly objectFields: readonly string[];
  readonly source: ExportSource;
}

export type ExportResources = Readonly<Record<ExportResource, ExportResourceSpec>>;
