import type { TObject, TSchema } from 'typebox';
import type { Scope } from '../auth/scopes.js';
import { CustomerListQuery, customerListRequest } from '../customers/customer.list.js';
import { CUSTOMER_SORT_KEYS } from '../customers/customer.repository.js';
import type { CustomerService } from '../customers/customer.service.js';
import type { SortKey } from '../db/keyset.js';
import { LeadListQuery, leadListRequest } from '../leads/lead.list.js';
import { LEAD_SORT_KEYS } from '../leads/lead.repository.js';
import type { LeadService } from '../leads/lead.service.js';
import type { ExportResource } from './export.schemas.js';
import type { ExportResourceSpec, ExportResources, ExportSource } from './export-resources.js';

/** Leads and customers as exports read them: each with its list route's query, rules and sorts. */
export function exportResources(
  leads: LeadService,
  customers: CustomerService,
  lead: TObject,
  customer: TObject,
): ExportResources {
  return {
    lead: spec('lead', 'leads:read', [LeadListQuery, leadListRequest as never], LEAD_SORT_KEYS, lead, leads),
    customer: spec(
      'customer',
      'customers:read',
      [CustomerListQuery, customerListRequest as never],
      CUSTOMER_SORT_KEYS,
      customer,
      customers,
    ),
  };
}

function spec(
  resource: ExportResource,
  readScope: Scope,
  [listQuery, listRequest]: [TSchema, ExportResourceSpec['listRequest']],
  sortKeys: object,
  object: TObject,
  source: unknown,
): ExportResourceSpec {
  return {
    resource,
    readScope,
    listQuery,
    listRequest,
    sortKeys: sortKeys as Record<string, SortKey<never>>,
    objectFields: Object.keys(object.properties),
    source: source as ExportSource,
  };
}
