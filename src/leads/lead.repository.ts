import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { SortKey } from '../db/keyset.js';
import { MATCH_KEY_COLUMNS } from '../records/match-key-rules.js';
import { RecordStore } from '../records/record-store.js';
import { RECORD_FILTERS, RECORD_SORT_KEYS, SEARCH_COLUMNS } from '../records/sort-keys.js';
import { leadFields } from './lead.fields.js';
import type { LeadListItem } from './lead.schemas.js';

export interface LeadFilters {
  statuses?: string[] | undefined;
  /** As the row holds it (storedPipeline). */
  pipeline?: string | null | undefined;
  source?: string | undefined;
  email?: string | undefined;
  externalId?: string | undefined;
  q?: string | undefined;
  updatedSince?: string | undefined;
  createdSince?: string | undefined;
  /** `custom.<key>=value` filters, as `[key, text]` pairs (SPEC §16). */
  custom?: [string, string][] | undefined;
  scoreMin?: number | undefined;
  scoreMax?: number | undefined;
}

export type LeadSortField = 'createdAt' | 'updatedAt' | 'name' | 'score' | 'lastContact';

/** Each sort as its index is built (migration 2026-11-21T1200); a never-contacted lead counts as contacted at -infinity. */
export const LEAD_SORT_KEYS: Record<LeadSortField, SortKey<LeadListItem>> = {
  ...RECORD_SORT_KEYS,
  score: { expression: sql`score`, type: 'integer', valueOf: (item) => item.score },
  lastContact: {
    expression: sql`coalesce(last_contact, '-infinity'::timestamptz)`,
    type: 'timestamptz',
    valueOf: (item) => item.lastContact ?? '-infinity',
  },
};

/** SPEC §13: an external id is unique per tenant and resource. */
export const LEAD_EXTERNAL_ID_KEY = 'leads_tenant_external_id_key';

/** The ids of the leads converted to a customer, locked for the transaction `trx`, in id order (writers take turns). */
export async function leadsConvertedTo(trx: Db, tenantId: string, customerId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from leads where tenant_id = ${tenantId} and customer_id = ${customerId}
    order by id for update`.execute(trx);
  return rows.map((row) => row.id);
}

/** The leads of each tenant: every statement takes the tenant first (RecordStore). */
export function leadStore(db: Db, scanRows?: number): RecordStore {
  const fields = leadFields;
  return new RecordStore(db, {
    table: 'leads',
    events: 'lead',
    columns: fields.rowColumns,
    listSelection: fields.listSelection,
    insertColumns: [...fields.writableColumns, ...MATCH_KEY_COLUMNS, 'id', 'tenantId', 'createdBy'],
    filters: {
      ...RECORD_FILTERS,
      source: { column: 'source', operator: '=' },
      scoreMin: { column: 'score', operator: '>=' },
      scoreMax: { column: 'score', operator: '<=' },
      // As the row holds it (storedPipeline): null is the tenant's first pipeline.
      pipeline: { column: 'pipelineId', operator: 'is not distinct from' },
    },
    derived: {
      // A lead put in another pipeline without a status goes to its first stage; one already there stays where it is (SPEC §20).
      stageOfPipeline: (_set, values) => ({
        status: sql`case when coalesce(${sql.ref('pipelineId')}, ${sql.ref('tenantId')}) = ${values.pipelineTarget}::uuid
          then ${sql.ref('status')} else ${values.firstStage}::text end`,
      }),
    },
    guard: { column: 'pipelineId', orColumn: 'tenantId' },
    merged: ['custom'],
    searchColumns: SEARCH_COLUMNS,
    scanRows,
  });
}
