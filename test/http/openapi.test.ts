import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ADMIN_API, API, describeEachBackend } from '../helpers/test-app.js';

// biome-ignore lint/suspicious/noExplicitAny: a test walks whatever JSON the document holds.
type Json = any;

const EXTERNAL_OPERATIONS = [
  'get /leads listLeads leads:read',
  'get /leads/summary getLeadSummary leads:read',
  'post /leads createLead leads:write|leads:create',
  'post /leads/batch batchLeads leads:write',
  'post /leads/{id}/convert convertLead leads:write,customers:write,customers:read',
  'get /leads/duplicates listLeadDuplicates leads:read',
  'post /leads/merge mergeLeads leads:read,leads:write',
  'get /leads/{id}/duplicates getLeadDuplicates leads:read',
  'get /leads/{id} getLead leads:read',
  'put /leads/{id} updateLead leads:write',
  'delete /leads/{id} deleteLead leads:write',
  'put /leads/{id}/status updateLeadStatus leads:write',
  'get /customers listCustomers customers:read',
  'post /customers createCustomer customers:write',
  'post /customers/batch batchCustomers customers:write',
  'get /customers/duplicates listCustomerDuplicates customers:read',
  'post /customers/merge mergeCustomers customers:read,customers:write',
  'post /merges/{id}/undo undoMerge leads:write|customers:write',
  'get /customers/{id}/duplicates getCustomerDuplicates customers:read',
  'get /customers/{id} getCustomer customers:read',
  'put /customers/{id} updateCustomer customers:write',
  'delete /customers/{id} deleteCustomer customers:write',
  'put /customers/{id}/status updateCustomerStatus customers:write',
  'get /events listEvents leads:read|customers:read',
  'post /exports createExport leads:read|customers:read',
  'get /exports/{id} getExport leads:read|customers:read',
  'get /exports/{id}/file getExportFile leads:read|customers:read',
  'get /webhooks listWebhooks webhooks:read',
  'post /webhooks createWebhook webhooks:write',
  'get /webhooks/{id} getWebhook webhooks:read',
  'put /webhooks/{id} updateWebhook webhooks:write',
  'delete /webhooks/{id} deleteWebhook webhooks:write',
  'post /webhooks/{id}/rotate-secret rotateWebhookSecret webhooks:write',
  'get /webhooks/{id}/deliveries listWebhookDeliveries webhooks:read',
  'post /webhooks/{id}/deliveries/{deliveryId}/retry retryWebhookDelivery webhooks:write',
  'post /webhooks/{id}/test testWebhook webhooks:write',
  'get /fields listCustomFields ',
  'get /fields/schema getCustomFieldSchema ',
  'post /fields createCustomField fields:write',
  'get /fields/{resource}/{key} getCustomField ',
  'put /fields/{resource}/{key} updateCustomField fields:write',
  'delete /fields/{resource}/{key} deleteCustomField fields:write',
  'get /pipelines listPipelines leads:read',
  'post /pipelines createPipeline pipelines:write',
  'get /pipelines/{id} getPipeline leads:read',
  'put /pipelines/{id} updatePipeline pipelines:write',
  'delete /pipelines/{id} deletePipeline pipelines:write',
  'post /imports createImport leads:write|customers:write',
  'get /imports/{id} getImport leads:read|leads:write|customers:read|customers:write',
  'get /imports/{id}/errors listImportErrors leads:read|leads:write|customers:read|customers:write',
  'post /imports/{id}/cancel cancelImport leads:write|customers:write',
  'post /imports/{id}/revert revertImport leads:write|customers:write',
  'get /personal-data getPersonalData privacy:read',
  'get /token getToken ',
  'post /personal-data/erase erasePersonalData privacy:write',
];

/** `value`, or the component its `$ref` names. */
function shared(document: Json, value: Json): Json {
  if (!value?.$ref) return value;
  const [, , kind, name] = value.$ref.split('/');
  return document.components[kind][name];
}

function operations(document: Json): [string, string, Json][] {
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, operation]) => [method, path, operation] as [string, string, Json]),
  );
}

describeEachBackend(
  'OpenAPI documents (issue: the contract made visible)',
  (ctx) => {
    let external: Json;
    let admin: Json;

    it('serves both documents without a token, as valid OpenAPI 3.1', async () => {
      const res = await ctx.request('GET', `${API}/openapi.json`);
      assert.equal(res.status, 200);
      external = res.body;
      admin = (await ctx.request('GET', `${ADMIN_API}/openapi.json`)).body;
      for (const document of [external, admin]) {
        assert.equal(document.openapi, '3.1.0');
        const result = await new Validator().validate(structuredClone(document));
        assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
      }
      assert.equal(external.servers[0].url, '/api/external/v1');
      assert.equal(admin.servers[0].url, '/api/admin/v1');
    });

    it('speaks to users: no text cites the specification, a document they never see', () => {
      for (const document of [external, admin]) {
        const cited = JSON.stringify(document).match(/.{0,60}SPEC §.{0,20}/g) ?? [];
        assert.deepEqual(cited, []);
      }
    });

    it('lists every external operation, with its scope, and nothing else', () => {
      const found = operations(external).map(
        ([method, path, operation]) =>
          `${method} ${path} ${operation.operationId} ${operation.security.map((s: Json) => s.tenantToken.join()).join('|')}`,
      );
      assert.deepEqual(found.sort(), [...EXTERNAL_OPERATIONS].sort());
      const createLead = operations(external).find(([, , operation]) => operation.operationId === 'createLead');
      assert.match(createLead?.[2].description, /With `upsert=`, needs `leads:write` and `leads:read` instead\./);
      for (const [, , operation] of operations(external)) {
        assert.ok(operation.summary, operation.operationId);
        assert.match(
          operation.description,
          /(Needs the scopes? `[a-z]+:(read|write|create)`((, | and | or )`[a-z]+:(read|write|create)`)*|Any token of the tenant may call it, whatever its scopes)\.$/,
        );
      }
      assert.equal(external.components.securitySchemes.tenantToken.scheme, 'bearer');
    });

    it('documents every error status in the SPEC §2 shape, with the headers answers carry', () => {
      for (const [method, path, operation] of operations(external)) {
        const statuses = Object.keys(operation.responses);
        for (const status of ['403', '429', '500', '503'])
          assert.ok(statuses.includes(status), `${method} ${path} ${status}`);
        if (path.includes('{id}')) assert.ok(statuses.includes('404'), `${method} ${path} 404`);
        if (method !== 'get' && method !== 'delete') assert.ok(statuses.includes('400'), `${method} ${path} 400`);
        for (const [status, response] of Object.entries(operation.responses as Json)) {
          // An export's file is CSV or NDJSON; every other answer, JSON.
          const schema = shared(external, (response as Json).content['application/json']?.schema);
          assert.ok((response as Json).headers['X-Request-Id'], `${method} ${path} ${status} X-Request-Id`);
          assert.ok((response as Json).headers['RateLimit-Remaining'], `${method} ${path} ${status} RateLimit`);
          if (!schema) assert.equal(`${method} ${path} ${status}`, 'get /exports/{id}/file 200');
          else if (Number(status) >= 400) {
            assert.deepEqual(schema.required.sort(), ['code', 'error', 'success']);
            assert.deepEqual(schema.properties.success, { type: 'boolean', enum: [false] });
          }
        }
      }
      assert.ok(external.paths['/leads/{id}'].get.responses['200'].headers.ETag);
      assert.ok(external.paths['/leads'].get.responses['200'].headers.Link);
      assert.ok(external.paths['/leads'].get.responses['200'].headers['X-Next-Cursor']);
      assert.ok(external.paths['/customers'].post.responses['409']);
      assert.ok(external.paths['/customers'].post.responses['422']);
      assert.ok(external.paths['/leads/{id}'].put.responses['412']);
    });

    it('documents the SPEC §6 list parameters and the §7/§8 request headers', () => {
      const names = (operation: Json, where: string) =>
        operation.parameters.filter((p: Json) => p.in === where).map((p: Json) => p.name);
      assert.deepEqual(names(external.paths['/leads'].get, 'query').sort(), [
        'createdSince',
        'cursor',
        'email',
        'externalId',
        'limit',
        'pipeline',
        'q',
        'scoreMax',
        'scoreMin',
        'sort',
        'source',
        'status',
        'updatedSince',
      ]);
      assert.deepEqual(names(external.paths['/customers'].get, 'query').sort(), [
        'createdSince',
        'cursor',
        'email',
        'externalId',
        'limit',
        'q',
        'sort',
        'status',
        'type',
        'updatedSince',
      ]);
      for (const path of ['/leads', '/customers']) {
        assert.deepEqual(names(external.paths[path].post, 'header'), ['idempotency-key']);
      }
      for (const path of ['/leads/{id}', '/customers/{id}']) {
        for (const method of ['put', 'delete'])
          assert.deepEqual(names(external.paths[path][method], 'header'), ['if-match']);
      }
    });

    it('is generated from the schemas that validate: list items have exactly the seed nine fields', () => {
      const item = external.paths['/leads'].get.responses['200'].content['application/json'].schema.items;
      assert.equal(item.additionalProperties, false);
      assert.deepEqual(Object.keys(item.properties).sort(), [
        '_id',
        'createdAt',
        'email',
        'lastContact',
        'name',
        'score',
        'source',
        'status',
        'updatedAt',
      ]);
      // A status is a stage of the lead's pipeline, each tenant's own (SPEC §20): no list of them in the document.
      const body = external.paths['/leads'].post.requestBody.content['application/json'].schema;
      assert.equal(body.properties.status.enum, undefined);
      assert.equal(body.properties.pipeline.format, 'uuid');
      assert.deepEqual(body.required, ['name']);
      assert.equal(JSON.stringify(external).includes('"transform"'), false);
    });

    it('describes a filter once, as the components EventFilter and EventCondition, which the webhooks name (SPEC §22)', () => {
      assert.deepEqual(Object.keys(external.components.schemas).sort(), ['Error', 'EventCondition', 'EventFilter']);
      const filter = external.components.schemas.EventFilter;
      assert.deepEqual(Object.keys(filter.properties).sort(), ['changedFields', 'excludeActors', 'types', 'where']);
      assert.equal(filter.properties.where.$ref, '#/components/schemas/EventCondition');
      assert.equal(
        external.components.schemas.EventCondition.properties.all.items.$ref,
        '#/components/schemas/EventCondition',
      );
      const refs = (schema: Json) => schema.anyOf.map((branch: Json) => branch.$ref ?? branch.type);
      const body = (path: string, method: string) =>
        external.paths[path][method].requestBody.content['application/json'].schema.properties.filter;
      assert.deepEqual(refs(body('/webhooks', 'post')), ['#/components/schemas/EventFilter', 'null']);
      assert.deepEqual(refs(body('/webhooks/{id}', 'put')), ['#/components/schemas/EventFilter', 'null']);
      const answer = external.paths['/webhooks/{id}'].get.responses['200'].content['application/json'].schema;
      assert.ok(answer.required.includes('filter'));
      const feed = external.paths['/events'].get.parameters.find((p: Json) => p.name === 'filter');
      assert.match(feed.description, /EventFilter/);
      assert.deepEqual(Object.keys(admin.components.schemas), ['Error'], 'the admin document names none of them');
    });

    it('describes the error body and the headers every answer carries once, under components', () => {
      for (const document of [external, admin]) {
        for (const [method, path, operation] of operations(document)) {
          for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
            const schema = response.content['application/json']?.schema;
            if (Number(status) >= 400)
              assert.equal(schema.$ref, '#/components/schemas/Error', `${method} ${path} ${status}`);
            for (const header of Object.values(response.headers as Record<string, Json>)) {
              if (header.$ref)
                assert.ok(shared(document, header)?.schema, `${method} ${path} ${status} ${header.$ref}`);
            }
          }
        }
      }
      const { headers } = external.components;
      assert.equal(headers['X-Request-Id'].required, true);
      assert.equal(headers['RateLimit-Remaining'].required, true);
      assert.equal(headers['RateLimit-Remaining.optional'].required, undefined);
      // What each status means on each route stays on the answer.
      assert.match(external.paths['/leads/{id}'].get.responses['404'].description, /not_found/);
    });

    it('gives the admin API its own document with its six operations', () => {
      const found = operations(admin).map(([method, path]) => `${method} ${path}`);
      assert.deepEqual(found.sort(), [
        'delete /tokens/{id}',
        'get /tenants',
        'get /tenants/{id}/tokens',
        'post /tenants',
        'post /tenants/{id}/tokens',
        'put /tenants/{id}',
      ]);
      assert.equal(admin.components.securitySchemes.adminToken.scheme, 'bearer');
    });

    it('reads well in independent tools: every operation summarised and tagged, every tag declared, every answer described', () => {
      for (const document of [external, admin]) {
        assert.deepEqual(document.info.license, { name: 'MIT', identifier: 'MIT' });
        assert.ok(document.info.contact?.name);
        const declared = document.tags.map((tag: Json) => tag.name);
        for (const tag of document.tags) assert.ok(tag.description, tag.name);
        for (const [method, path, operation] of operations(document)) {
          const where = `${method} ${path}`;
          assert.ok(operation.summary && operation.description, `${where}: summary and description`);
          assert.ok(operation.tags.length > 0 && operation.tags.every((tag: string) => declared.includes(tag)), where);
          for (const parameter of operation.parameters ?? [])
            assert.ok(parameter.description, `${where} ${parameter.name}`);
          for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
            assert.ok(response.description && response.description !== 'Default Response', `${where} ${status}`);
            assert.equal(
              shared(document, response.headers['X-Request-Id']).required,
              true,
              `${where} ${status} X-Request-Id`,
            );
          }
          const body = operation.requestBody?.content['application/json'];
          if (body) assert.ok(body.example, `${where}: a request body example`);
        }
      }
      assert.equal(
        shared(external, external.paths['/leads'].get.responses['200'].headers['RateLimit-Remaining']).required,
        true,
      );
      assert.equal(
        shared(external, external.paths['/leads'].get.responses['429'].headers['Retry-After']).required,
        true,
      );
      assert.equal(
        external.paths['/webhooks'].post.requestBody.content['application/json'].schema.properties.url.format,
        'uri',
      );
    });

    it('marks the request body of a conversion optional, as the server takes none', () => {
      assert.equal(external.paths['/leads/{id}/convert'].post.requestBody.required, false);
      assert.equal(external.paths['/leads'].post.requestBody.required, true);
    });

    it("describes each operation's own 409, beside the Idempotency-Key one any POST may meet", () => {
      const conflict = (path: string, method: string) => external.paths[path][method].responses['409']?.description;
      assert.match(
        conflict('/leads', 'post'),
        /another lead has this `externalId`.*; or a request with the same Idempotency-Key/,
      );
      assert.doesNotMatch(conflict('/leads', 'post'), /e-mail is taken/);
      assert.match(conflict('/customers', 'post'), /another customer has this e-mail or `externalId`/);
      assert.match(conflict('/customers/{id}', 'put'), /another customer has this e-mail/);
      assert.doesNotMatch(conflict('/customers/{id}', 'put'), /Idempotency-Key/);
      assert.match(conflict('/fields', 'post'), /a field with this key/);
      assert.match(conflict('/webhooks', 'post'), /25 subscriptions already/);
      assert.match(
        conflict('/webhooks/{id}/deliveries/{deliveryId}/retry', 'post'),
        /an attempt of this delivery is under way/,
      );
      for (const path of [
        '/webhooks/{id}/rotate-secret',
        '/webhooks/{id}/test',
        '/personal-data/erase',
        '/leads/batch',
      ]) {
        assert.match(
          conflict(path, 'post'),
          /^`conflict`: a request with the same Idempotency-Key is still running/,
          path,
        );
      }
      assert.equal(external.paths['/leads/{id}/status'].put.responses['409'], undefined);
    });
  },
  { FUNIL_LEAD_STATUSES: 'open,closed' },
);
