import type { FastifyPluginAsync } from 'fastify';
import type { CursorCodec } from '../records/cursor.js';
import { registerRecordRoutes } from '../records/record.routes.js';
import { CustomerListQuery, customerListRequest } from './customer.list.js';
import { customerMessages } from './customer.messages.js';
import { CUSTOMER_SORT_KEYS } from './customer.repository.js';
import { CreateCustomer, Customer, CustomerList, UpdateCustomer, UpdateCustomerStatus } from './customer.schemas.js';
import type { CustomerService } from './customer.service.js';

interface CustomerRoutesOptions {
  customers: CustomerService;
  cursors: CursorCodec;
}

export const customerRoutes: FastifyPluginAsync<CustomerRoutesOptions> = async (app, { customers, cursors }) => {
  registerRecordRoutes(app, {
    cursors,
    service: customers,
    path: 'customers',
    noun: 'Customer',
    scopes: { read: 'customers:read', write: 'customers:write' },
    notFoundText: customerMessages.customerNotFound,
    schemas: {
      object: Customer,
      list: CustomerList,
      listQuery: CustomerListQuery,
      create: CreateCustomer,
      update: UpdateCustomer,
      status: UpdateCustomerStatus,
    },
    listRequest: (query) => customerListRequest(query as CustomerListQuery),
    sortKeys: CUSTOMER_SORT_KEYS,
    statusSummary: 'Set the status of a customer',
    conflictText:
      'another customer has this e-mail or `externalId` (`existingId` names it, to a token that may read customers)',
  });
};
