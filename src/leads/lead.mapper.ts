import { pickWritable, toIso } from '../shared/fields.js';
import type { LeadListRow, LeadRow, LeadValues } from './lead.repository.js';
import type { Lead, LeadListItem } from './lead.schemas.js';

export const LEAD_WRITABLE_FIELDS = [
  'name',
  'email',
  'phone',
  'source',
  'status',
  'score',
  'lastContact',
  'notes',
] as const satisfies readonly (keyof LeadValues)[];

/** The fields of a validated body that change the lead, in storage types. */
export function leadChanges(body: Readonly<Record<string, unknown>>): Partial<LeadValues> {
  const changes = pickWritable(body, LEAD_WRITABLE_FIELDS) as Partial<Record<keyof LeadValues, unknown>>;
  if (typeof changes.lastContact === 'string') changes.lastContact = new Date(changes.lastContact);
  return changes as Partial<LeadValues>;
}

export function toLead(row: LeadRow): Lead {
  return {
    _id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    source: row.source,
    status: row.status,
    score: row.score,
    lastContact: toIso(row.lastContact),
    notes: row.notes,
    tenant: row.tenantId,
    createdBy: row.createdBy,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  };
}

export function toLeadListItem(row: LeadListRow): LeadListItem {
  return {
    _id: row.id,
    name: row.name,
    email: row.email,
    status: row.status,
    score: row.score,
    lastContact: toIso(row.last_contact_text),
    source: row.source,
    createdAt: toIso(row.created_at_text),
    updatedAt: toIso(row.updated_at_text),
  };
}
