import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../db/database.js';
import type { CustomFieldCatalog } from '../fields/custom-field-catalog.js';
import type { CursorCodec } from '../http/cursor.js';
import { registerRecordRoutes } from '../records/record.routes.js';
import { CustomerListQuery, customerListRequest } from './customer.list.js';
import { customerMessages } from './customer.messages.js';
import { CUSTOMER_SORT_KEYS } from './customer.repository.js';
import { CreateCustomer, Customer, CustomerList, UpdateCustomer, UpdateCustomerStatus } from './customer.schemas.js';
import { CustomerService } from './customer.service.js';

interface CustomerRoutesOptions {
  db: Db;
  cursors: CursorCodec;
  /** The most rows a filtered list page reads (RecordStore.list). */
  listScanRows: number | undefined;
  catalog: CustomFieldCatalog;
}

export const customerRoutes: FastifyPluginAsync<CustomerRoutesOptions> = async (
  app,
  { db, cursors, listScanRows, catalog },
) => {
  registerRecordRoutes(app, {
    db,
    cursors,
    service: new CustomerService(db, listScanRows, catalog),
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
    conflicts: true,
  });
};
