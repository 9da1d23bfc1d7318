import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { actorOf, principalOf } from '../http/authenticate.js';
import { setNextPage } from '../http/next-page.js';
import { whileUploading } from '../http/request-deadline.js';
import { answer, errorResponses, IdParams } from '../http/schemas.js';
import { unsupportedMediaType } from '../shared/errors.js';
import { languageOf } from '../shared/messages.js';
import { buildValidatorCompiler } from '../shared/validation.js';
import {
  IMPORT_LIMITS,
  ImportAccepted,
  ImportErrorsQuery,
  ImportObject,
  ImportQuery,
  ImportRowErrors,
} from './import.schemas.js';
import { IMPORT_SCOPES, type ImportCaller, type ImportFormat, type ImportService, toImport } from './import.service.js';

interface ImportRoutesOptions {
  imports: ImportService;
}

/** The media types an import reads, and the format each is. */
const FORMATS: Readonly<Record<string, ImportFormat>> = {
  'text/csv': 'csv',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
};

const ANY_RESOURCE_SCOPE = {
  anyOf: ['leads:read', 'leads:write', 'customers:read', 'customers:write'],
} as const;

/** SPEC §23: `POST /imports` and an import's progress, faults, cancel and revert. */
export const importRoutes: FastifyPluginAsync<ImportRoutesOptions> = async (app, { imports }) => {
  // Encapsulated: only these routes read CSV and NDJSON, and they read them as a stream.
  app.addContentTypeParser(Object.keys(FORMATS), (_request, payload, done) => done(null, payload));
  const compile = buildValidatorCompiler();
  const caller = (request: FastifyRequest): ImportCaller => ({
    ...actorOf(request),
    scopes: principalOf(request).scopes,
  });

  app.post(
    '/imports',
    {
      schema: {
        operationId: 'createImport',
        summary: 'Import leads or customers from a CSV or NDJSON file',
        description:
          'The body is the file: `text/csv` (UTF-8 with or without BOM; `,` or `;` separated, whichever the header ' +
          'line has more of; RFC 4180 quotes; a header row of API field names, `custom.<key>` for custom fields; an ' +
          'empty cell is no value; in a `;` file numbers are written `1.234,56`; yes/no as `true`/`false`/`sim`/`não`; ' +
          'multiselect values as `a|b`) or `application/x-ndjson` (one create body per line). At most ' +
          `${IMPORT_LIMITS.bytes / 1024 / 1024} MiB and ${IMPORT_LIMITS.rows.toLocaleString('en')} rows. The file is ` +
          'stored as it arrives, then applied by a job in transactions of 1,000 rows, each row as `POST /{resource}` ' +
          '(with `upsert=`, as an upsert) would, with its event. A header that names no field is a 400 before anything ' +
          'is stored; a row at fault is listed by `GET /imports/{id}/errors`. Needs the write scope of `resource`, and ' +
          'with `upsert=` its read scope too.',
        tags: ['imports'],
        querystring: ImportQuery,
        consumes: Object.keys(FORMATS),
        body: Type.String({
          description: 'The file, CSV or NDJSON.',
          examples: ['name,email,phone\nMaria Souza,maria@example.com,+55 11 91234-5678\n'],
        }),
        response: {
          202: answer(ImportAccepted, 'Stored and queued: follow `Location`.'),
          ...errorResponses(400, 403, 413, 415),
        },
      },
      config: {
        scope: { anyOf: ['leads:write', 'customers:write'] },
        scopeOf: (query) => {
          const scopes = IMPORT_SCOPES[query.resource === 'customer' ? 'customer' : 'lead'];
          if (query.resource !== 'lead' && query.resource !== 'customer')
            return { anyOf: ['leads:write', 'customers:write'] };
          return query.upsert === undefined ? scopes.write : [scopes.write, scopes.read];
        },
      },
      // The body is the file, read by the handler as it arrives: the schema above only documents it.
      validatorCompiler: (request) => (request.httpPart === 'body' ? () => true : compile(request)),
    },
    async (request, reply) => {
      const format = FORMATS[(request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''];
      if (!format || !(request.body instanceof Readable)) throw unsupportedMediaType();
      const body = request.body;
      const stored = await whileUploading(request, () =>
        imports.receive(request.db, actorOf(request), request.query as ImportQuery, format, body),
      );
      reply.code(202).header('location', `/imports/${stored.id}`);
      return { id: stored.id, status: toImport(stored).status };
    },
  );

  app.get(
    '/imports/:id',
    {
      schema: {
        operationId: 'getImport',
        summary: "An import's progress",
        description: 'Any read or write scope of its resource sees it; to any other token it does not exist (404).',
        tags: ['imports'],
        params: IdParams,
        response: { 200: answer(ImportObject, 'The import.'), ...errorResponses(400, 403, 404) },
      },
      config: { scope: ANY_RESOURCE_SCOPE },
    },
    async (request) => toImport(await imports.find(request.db, caller(request), (request.params as IdParams).id)),
  );

  app.get(
    '/imports/:id/errors',
    {
      schema: {
        operationId: 'listImportErrors',
        summary: 'The rows an import refused (or its revert left as they were), in row order',
        description:
          'One entry per field at fault, with the error code and message the row would have had as a request. ' +
          'Paged: `X-Next-Cursor` and `Link` while more follow.',
        tags: ['imports'],
        params: IdParams,
        querystring: ImportErrorsQuery,
        response: { 200: answer(ImportRowErrors, 'A page of faults.'), ...errorResponses(400, 403, 404) },
      },
      config: { scope: ANY_RESOURCE_SCOPE },
    },
    async (request, reply) => {
      const query = request.query as ImportErrorsQuery;
      const page = await imports.faults(request.db, caller(request), (request.params as IdParams).id, {
        phase: query.phase ?? 'import',
        limit: query.limit ?? 100,
        cursor: query.cursor,
      });
      if (page.next) setNextPage(request, reply, page.next);
      const language = languageOf(request.headers['accept-language']);
      return page.faults.map((fault) => ({
        row: fault.row,
        field: fault.field,
        code: fault.code,
        message: fault.message[language],
        recordId: fault.recordId ?? null,
      }));
    },
  );

  app.post(
    '/imports/:id/cancel',
    {
      schema: {
        operationId: 'cancelImport',
        summary: 'Stop an import',
        description:
          'The chunk under way ends; no other starts. What was applied stays (`POST /imports/{id}/revert` takes it ' +
          'back). 409 when the import is over. Needs the write scope of its resource.',
        tags: ['imports'],
        params: IdParams,
        response: { 200: answer(ImportObject, 'The import, cancelled.'), ...errorResponses(400, 403, 404, 409) },
      },
      config: { scope: { anyOf: ['leads:write', 'customers:write'] } },
    },
    async (request) => toImport(await imports.cancel(request.db, caller(request), (request.params as IdParams).id)),
  );

  app.post(
    '/imports/:id/revert',
    {
      schema: {
        operationId: 'revertImport',
        summary: 'Take an import back',
        description:
          'Deletes each record the import created and puts back the values before it of each one it updated (from ' +
          'its events), each change with its event (reason `revert`). A record changed or deleted since the ' +
          'import is left as it is and listed by `GET /imports/{id}/errors?phase=revert`. Runs as a job: follow ' +
          '`revert` in the import. Once per import, after it ended; not for a dry run. Needs the write scope of its ' +
          'resource.',
        tags: ['imports'],
        params: IdParams,
        response: { 202: answer(ImportObject, 'The revert has started.'), ...errorResponses(400, 403, 404, 409) },
      },
      config: { scope: { anyOf: ['leads:write', 'customers:write'] } },
    },
    async (request, reply) => {
      const started = await imports.revert(request.db, caller(request), (request.params as IdParams).id);
      reply.code(202);
      return toImport(started);
    },
  );
};
