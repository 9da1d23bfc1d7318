import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ANY_TOKEN } from '../auth/scopes.js';
import { actorOf, principalOf } from '../http/authenticate.js';
import { answer, conflictResponse, errorResponses, SuccessBody } from '../http/schemas.js';
import { notFound } from '../shared/errors.js';
import { customFieldMessages } from './custom-field.messages.js';
import {
  CustomField,
  type CustomFieldCreate,
  CustomFieldCreate as CustomFieldCreateSchema,
  CustomFieldJsonSchema,
  CustomFieldList,
  CustomFieldListQuery,
  CustomFieldParams,
  CustomFieldSchemaQuery,
  type CustomFieldUpdate,
  CustomFieldUpdate as CustomFieldUpdateSchema,
} from './custom-field.schemas.js';
import type { CustomFieldService } from './custom-field.service.js';
import { CUSTOM_KEY_PATTERN, CUSTOM_LIMITS, CUSTOM_RESOURCES, type CustomResource } from './custom-field-types.js';

interface CustomFieldRoutesOptions {
  fields: CustomFieldService;
}

/** Any token of the tenant reads its fields (SPEC §16). */
const anyToken = { scope: ANY_TOKEN } as const;
const write = { scope: 'fields:write' } as const;
const tags = ['fields'];
const KEY = new RegExp(CUSTOM_KEY_PATTERN);

/**
 * SPEC §2's order: a path that names no field (an unknown resource, a key no field can have) is
 * a 404 before the body is read.
 */
async function fieldPath(request: FastifyRequest): Promise<void> {
  const { resource, key } = request.params as { resource: string; key: string };
  if (!(CUSTOM_RESOURCES as readonly string[]).includes(resource) || !KEY.test(key)) {
    throw notFound(customFieldMessages.fieldNotFound);
  }
}

/** SPEC §16: each tenant's own fields on leads and customers, and their JSON Schema. */
export const customFieldRoutes: FastifyPluginAsync<CustomFieldRoutesOptions> = async (app, { fields: service }) => {
  const tenantOf = (request: FastifyRequest) => principalOf(request).tenantId;
  const byPath = '/fields/:resource/:key';

  app.get(
    '/fields',
    {
      schema: {
        operationId: 'listCustomFields',
        summary: "List the tenant's custom fields",
        description: 'Oldest first, leads before customers. Any token of the tenant may read them.',
        tags,
        querystring: CustomFieldListQuery,
        response: { 200: answer(CustomFieldList, "The tenant's custom fields."), ...errorResponses(400, 403) },
      },
      config: anyToken,
    },
    async (request) => {
      const { resource } = request.query as { resource?: CustomResource };
      return service.list(request.db, tenantOf(request), resource);
    },
  );

  app.get(
    '/fields/schema',
    {
      schema: {
        operationId: 'getCustomFieldSchema',
        summary: "The JSON Schema of a resource's custom values",
        description:
          'For generated forms and validators: `custom` of a create body of the resource, as this tenant defines it.',
        tags,
        querystring: CustomFieldSchemaQuery,
        response: {
          200: answer(CustomFieldJsonSchema, 'A JSON Schema (2020-12) of `custom` on that resource.'),
          ...errorResponses(400, 403),
        },
      },
      config: anyToken,
    },
    async (request) => {
      const { resource } = request.query as { resource: CustomResource };
      return service.jsonSchema(request.db, tenantOf(request), resource);
    },
  );

  app.post(
    '/fields',
    {
      schema: {
        operationId: 'createCustomField',
        summary: 'Define a custom field',
        description:
          'At most 100 per resource. Records then take its values under `custom.<key>`, and lists filter by ' +
          '`custom.<key>=value`.',
        tags,
        body: CustomFieldCreateSchema,
        response: {
          201: answer(CustomField, 'The field defined.'),
          ...errorResponses(400, 403, 413, 415),
          ...conflictResponse(
            'the resource has a field with this key, or had one whose values are still being removed (try again ' +
              `shortly), or has ${CUSTOM_LIMITS.fieldsPerResource} fields already, the most it may have`,
          ),
        },
      },
      config: write,
    },
    async (request, reply) => {
      const created = await service.create(request.db, tenantOf(request), request.body as CustomFieldCreate);
      reply.code(201);
      return created;
    },
  );

  app.get(
    byPath,
    {
      schema: {
        operationId: 'getCustomField',
        summary: 'Get a custom field',
        tags,
        params: CustomFieldParams,
        response: { 200: answer(CustomField, 'The field.'), ...errorResponses(403, 404) },
      },
      config: anyToken,
      preValidation: fieldPath,
    },
    async (request) => {
      const { resource, key } = request.params as CustomFieldParams;
      return service.find(request.db, tenantOf(request), resource, key);
    },
  );

  app.put(
    byPath,
    {
      schema: {
        operationId: 'updateCustomField',
        summary: "Change a custom field's label, options or required",
        description:
          'The type cannot change. Records keep the values they hold: an option removed stays where it was, and a ' +
          'field made required applies to the next creates and clears.',
        tags,
        params: CustomFieldParams,
        body: CustomFieldUpdateSchema,
        response: { 200: answer(CustomField, 'The field, changed.'), ...errorResponses(400, 403, 404, 413, 415) },
      },
      config: write,
      preValidation: fieldPath,
    },
    async (request) => {
      const { resource, key } = request.params as CustomFieldParams;
      return service.update(request.db, tenantOf(request), resource, key, request.body as CustomFieldUpdate);
    },
  );

  app.delete(
    byPath,
    {
      schema: {
        operationId: 'deleteCustomField',
        summary: 'Delete a custom field, and its values from every record',
        description:
          'Records lose the value at once for writes (the key is no longer accepted); the stored values are removed ' +
          'before the answer on most tenants, and within seconds after it on large ones. The key can be defined ' +
          'again once they are gone (until then, a 409).',
        tags,
        params: CustomFieldParams,
        response: { 200: answer(SuccessBody, 'Deleted; its values go with it.'), ...errorResponses(403, 404) },
      },
      config: write,
      preValidation: fieldPath,
    },
    async (request) => {
      const { resource, key } = request.params as CustomFieldParams;
      await service.delete(request.db, actorOf(request), resource, key);
      return { success: true as const };
    },
  );
};
