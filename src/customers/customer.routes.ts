import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../db/database.js';
import { principalOf } from '../http/authenticate.js';
import type { CursorCodec } from '../http/cursor.js';
import { conflict, notFound, validationFailed } from '../http/errors.js';
import { expectedVersions, IfMatchHeaders, setEtag } from '../http/etag.js';
import { listPage } from '../http/list-query.js';
import { messages } from '../http/messages.js';
import { errorResponses, IdParams, SuccessBody } from '../http/schemas.js';
import { CustomerListQuery, customerListRequest } from './customer.list.js';
import { customerChanges, splitName, toCustomer, toCustomerListItem } from './customer.mapper.js';
import {
  CUSTOMER_SORT_KEYS,
  type CustomerPatch,
  CustomerRepository,
  type CustomerValues,
  EmailTakenError,
} from './customer.repository.js';
import { CreateCustomer, Customer, CustomerList, UpdateCustomer, UpdateCustomerStatus } from './customer.schemas.js';

const notFoundText = messages.customerNotFound;
const tags = ['customers'];

function emailConflict(error: unknown): never {
  if (error instanceof EmailTakenError) {
    throw conflict(messages.customerEmailTaken, error.existingId ? { existingId: error.existingId } : undefined);
  }
  throw error;
}

interface CustomerRoutesOptions {
  db: Db;
  cursors: CursorCodec;
}

export const customerRoutes: FastifyPluginAsync<CustomerRoutesOptions> = async (fastify, { db, cursors }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const customers = new CustomerRepository(db);

  app.get(
    '/customers',
    {
      schema: {
        operationId: 'listCustomers',
        summary: 'List customers',
        description:
          'A page of customers, newest first unless `sort` says otherwise. While more rows exist, the answer ' +
          'carries `Link: <next page URL>; rel="next"` and `X-Next-Cursor`.',
        tags,
        querystring: CustomerListQuery,
        response: { 200: CustomerList, ...errorResponses(400, 403) },
      },
      config: { scope: 'customers:read' },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const { sort, filters, limit } = customerListRequest(request.query);
      return listPage(request, reply, cursors, {
        tenantId,
        sort: request.query.sort ?? '-createdAt',
        key: CUSTOMER_SORT_KEYS[sort.field],
        descending: sort.descending,
        limit,
        cursor: request.query.cursor,
        filters,
        fetch: async (page) => (await customers.list(tenantId, filters, page)).map(toCustomerListItem),
      });
    },
  );

  app.get(
    '/customers/:id',
    {
      schema: {
        operationId: 'getCustomer',
        summary: 'Get a customer',
        tags,
        params: IdParams,
        response: { 200: Customer, ...errorResponses(403, 404) },
      },
      config: { scope: 'customers:read', notFoundText },
    },
    async (request, reply) => {
      const row = await customers.find(principalOf(request).tenantId, request.params.id);
      if (!row) throw notFound(notFoundText);
      setEtag(reply, row);
      return toCustomer(row);
    },
  );

  app.post(
    '/customers',
    {
      schema: {
        operationId: 'createCustomer',
        summary: 'Create a customer',
        tags,
        body: CreateCustomer,
        response: { 201: Customer, ...errorResponses(400, 403, 409, 413, 415) },
      },
      config: { scope: 'customers:write' },
    },
    async (request, reply) => {
      const changes = customerChanges(request.body);
      const name = changes.name as string;
      const derived = splitName(name);
      const values: CustomerValues = {
        name,
        email: changes.email as string,
        firstName: 'firstName' in changes ? (changes.firstName ?? null) : derived.firstName,
        lastName: 'lastName' in changes ? (changes.lastName ?? null) : derived.lastName,
        phone: changes.phone ?? null,
        status: changes.status ?? 'active',
        type: changes.type ?? 'individual',
        value: changes.value ?? 0,
        autoPayment: changes.autoPayment ?? false,
        notes: changes.notes ?? null,
      };
      const row = await customers.create(principalOf(request).tenantId, values).catch(emailConflict);
      setEtag(reply, row);
      return reply.code(201).send(toCustomer(row));
    },
  );

  app.put(
    '/customers/:id/status',
    {
      schema: {
        operationId: 'updateCustomerStatus',
        summary: 'Set the status of a customer',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: UpdateCustomerStatus,
        response: { 200: Customer, ...errorResponses(400, 403, 404, 412, 413, 415) },
      },
      config: { scope: 'customers:write', notFoundText },
    },
    async (request, reply) => {
      const row = await customers.update(
        principalOf(request).tenantId,
        request.params.id,
        { status: request.body.status },
        expectedVersions(request),
      );
      if (!row) throw notFound(notFoundText);
      setEtag(reply, row);
      return toCustomer(row);
    },
  );

  app.put(
    '/customers/:id',
    {
      schema: {
        operationId: 'updateCustomer',
        summary: 'Update some fields of a customer',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: UpdateCustomer,
        response: { 200: Customer, ...errorResponses(400, 403, 404, 409, 412, 413, 415) },
      },
      config: { scope: 'customers:write', notFoundText },
    },
    async (request, reply) => {
      const patch: CustomerPatch = customerChanges(request.body);
      if (Object.keys(patch).length === 0) throw validationFailed([], messages.emptyUpdate);
      if (patch.name !== undefined) {
        const derived = splitName(patch.name);
        if (!('firstName' in patch)) patch.firstName = derived.firstName;
        if (!('lastName' in patch)) patch.lastName = derived.lastName;
      } else if ('firstName' in patch || 'lastName' in patch) {
        patch.nameFromParts = true;
      }
      const row = await customers
        .update(principalOf(request).tenantId, request.params.id, patch, expectedVersions(request))
        .catch(emailConflict);
      if (!row) throw notFound(notFoundText);
      setEtag(reply, row);
      return toCustomer(row);
    },
  );

  app.delete(
    '/customers/:id',
    {
      schema: {
        operationId: 'deleteCustomer',
        summary: 'Delete a customer',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 200: SuccessBody, ...errorResponses(403, 404, 412) },
      },
      config: { scope: 'customers:write', notFoundText },
    },
    async (request) => {
      const tenantId = principalOf(request).tenantId;
      const deleted = await customers.delete(tenantId, request.params.id, expectedVersions(request));
      if (!deleted) throw notFound(notFoundText);
      return { success: true as const };
    },
  );
};
