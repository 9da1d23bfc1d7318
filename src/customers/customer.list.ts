import { type Static, Type } from 'typebox';
import {
  customFilterParameters,
  customFilters,
  listQueryFields,
  parseSort,
  statusList,
} from '../records/list-query.js';
import { StringEnum } from '../shared/schemas.js';
import type { CustomerFilters, CustomerSortField } from './customer.repository.js';
import { CUSTOMER_STATUSES, CUSTOMER_TYPES } from './customer.schemas.js';

export const CUSTOMER_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;

export const CustomerListQuery = Type.Object(
  {
    ...listQueryFields(CUSTOMER_SORT_FIELDS, 'active,inactive'),
    type: Type.Optional(StringEnum(CUSTOMER_TYPES, { description: 'Customer type.' })),
  },
  { additionalProperties: false, ...customFilterParameters },
);
export type CustomerListQuery = Static<typeof CustomerListQuery>;

export function customerListRequest(query: CustomerListQuery) {
  const filters: CustomerFilters = {
    statuses: statusList(query.status, CUSTOMER_STATUSES),
    type: query.type,
    email: query.email,
    externalId: query.externalId,
    q: query.q,
    updatedSince: query.updatedSince,
    createdSince: query.createdSince,
    custom: customFilters(query),
  };
  return { sort: parseSort<CustomerSortField>(query.sort), filters, limit: query.limit ?? 100 };
}
