import { CUSTOMER_SORT_FIELDS, CustomerListQuery, customerListRequest } from '../customers/customer.list.js';
import { CUSTOMER_SORT_KEYS } from '../customers/customer.repository.js';
import {
  CreateCustomer,
  CUSTOMER_STATUSES,
  CUSTOMER_TYPES,
  Customer,
  UpdateCustomer,
} from '../customers/customer.schemas.js';
import type { CursorCodec } from '../records/cursor.js';
import type { McpServices } from './mcp-services.js';
import { type McpTool, quoted } from './mcp-tool.js';
import { recordTools } from './record-tools.js';

/** The four customer tools of SPEC §19, over the service the REST customer routes call. */
export function customerTools(services: McpServices, cursors: CursorCodec): McpTool[] {
  const { customers } = services;
  return recordTools({
    noun: 'customer',
    scopes: { read: 'customers:read', write: 'customers:write' },
    lister: {
      service: customers,
      listRequest: (query) => customerListRequest(query as CustomerListQuery),
      sortKeys: CUSTOMER_SORT_KEYS,
    },
    cursors,
    schemas: { object: Customer, listItem: Customer, create: CreateCustomer, update: UpdateCustomer },
    search: {
      query: CustomerListQuery,
      filters: ['q', 'email', 'status', 'type', 'createdSince', 'updatedSince'],
      words: {
        q: 'Part of the name, e-mail or phone, any case (at least 3 characters).',
        email: 'The exact e-mail, any case: at most one customer has it.',
        status: `One status, or several separated by commas: ${quoted(CUSTOMER_STATUSES)}.`,
        type: `${quoted(CUSTOMER_TYPES)}.`,
        createdSince: 'Only customers created at or after this time (ISO 8601, e.g. 2026-11-23T00:00:00Z).',
        updatedSince: 'Only customers changed at or after this time (ISO 8601).',
        sort: `The order: one of ${CUSTOMER_SORT_FIELDS.join(', ')}; a "-" before it sorts descending. Default "-createdAt": newest first.`,
      },
    },
    descriptions: {
      search:
        "Find customers in this account's customer register. Filters combine (all must match): q, email, status, " +
        'type, creation or change time. Returns {items, nextCursor}, items being whole customers. A page may hold ' +
        'fewer than `limit` customers, even none, and still have a nextCursor: while nextCursor is not null, more ' +
        'customers may match.',
      get:
        'Read one customer by its _id: name, firstName, lastName, email, phone, status, type, value, ' +
        'autoPayment, notes, externalId, custom fields, createdAt, updatedAt. Returns {customer, etag}. An unknown ' +
        'id is a not_found error.',
      create:
        'Add a customer to the register. Requires name and email; firstName and lastName are taken from the name ' +
        'unless given. An e-mail belongs to one customer: another customer holding it is a conflict error whose ' +
        'existingId names that customer. To turn a lead into a customer use convert_lead instead, which links ' +
        'the two. Returns {customer, etag}.',
      update:
        'Change some fields of a customer: put only the fields to change in `fields` (the others keep their ' +
        `values; null or "" clears an optional one). status is one of ${quoted(CUSTOMER_STATUSES)}. Returns ` +
        '{customer, etag}.',
    },
  });
}
