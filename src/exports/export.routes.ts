import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { authMessages } from '../auth/auth.messages.js';
import { lackingScopes } from '../auth/scopes.js';
import type { Db } from '../db/database.js';
import { principalOf } from '../http/authenticate.js';
import { answer, ErrorBody, errorResponses, IdParams } from '../http/schemas.js';
import { ApiError, conflict, forbidden, notFound } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { exportMessages } from './export.messages.js';
import { exportRepository } from './export.repository.js';
import { CreateExport, ExportAccepted, ExportObject } from './export.schemas.js';
import { acceptsGzip, fileStream } from './export-file.js';
import type { ExportRequests } from './export-request.js';
import type { ExportResources } from './export-resources.js';
import type { ExportRuns } from './export-runs.js';

interface ExportRoutesOptions {
  /** The database's own handle, which a file streams from: a download outlives its request's wait budget. */
  db: Db;
  resources: ExportResources;
  requests: ExportRequests;
  runs: ExportRuns;
}

const tags = ['exports'];
/** Each export needs its resource's read scope; a route takes either, and the handler checks which. */
const EITHER_READ = { anyOf: ['leads:read', 'customers:read'] } as const;
const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson' } as const;

const notReady = { 409: { ...ErrorBody, description: '`conflict`: the export has not succeeded (yet, or at all).' } };
const expired = {
  410: {
    ...ErrorBody,
    description: '`export_expired`: the file was deleted (24 hours after it was made, or by an erasure).',
  },
};

/** SPEC §23: exports of leads or customers, made in the background, fetched as a file for 24 hours. */
export const exportRoutes: FastifyPluginAsync<ExportRoutesOptions> = async (app, { db, resources, requests, runs }) => {
  /** The export, when the caller's tenant has it and the caller may read its resource (else 404, 403). */
  const readable = async (request: FastifyRequest): Promise<ExportObject> => {
    const { id } = request.params as IdParams;
    const principal = principalOf(request);
    const found = await exportRepository.find(request.db, principal.tenantId, id);
    if (!found) throw notFound(exportMessages.exportNotFound);
    mayRead(principal.scopes, resources[found.resource].readScope);
    return found;
  };

  app.post(
    '/exports',
    {
      schema: {
        operationId: 'createExport',
        summary: 'Export leads or customers to a file, in the background',
        description:
          "Checks the request at once (the list's filters and sort, the fields), then makes the file in the " +
          'background from one consistent snapshot: every row as it was at one moment. Answers 202 with the ' +
          "export's id and `Location: /exports/{id}`; follow `GET /exports/{id}`, then fetch `GET /exports/{id}/file`. " +
          "Needs the resource's read scope (`leads:read` or `customers:read`).",
        tags,
        body: CreateExport,
        response: {
          202: {
            ...answer(ExportAccepted, 'Accepted: the export runs in the background.'),
            headers: {
              Location: { type: 'string', description: "The export's address: `/exports/{id}`." },
            },
          },
          ...errorResponses(400, 403, 413, 415),
        },
      },
      config: { scope: EITHER_READ },
      // The resource's scope before the body's validation (SPEC §2: a 403 comes before a 400).
      preValidation: async (request) => {
        const { resource } = (request.body ?? {}) as { resource?: unknown };
        const spec = Object.values(resources).find((candidate) => candidate.resource === resource);
        if (spec) mayRead(principalOf(request).scopes, spec.readScope);
      },
    },
    async (request, reply) => {
      const body = request.body as CreateExport;
      const principal = principalOf(request);
      mayRead(principal.scopes, resources[body.resource].readScope);
      const { query, fields } = await requests.check(request.db, principal.tenantId, body);
      const created = await exportRepository.create(request.db, principal.tenantId, {
        id: newId(),
        resource: body.resource,
        format: body.format,
        query,
        fields,
        tokenId: principal.tokenId,
      });
      void runs.start(principal.tenantId, created.id);
      reply.code(202).header('location', `/exports/${created.id}`);
      return { id: created.id, status: created.status };
    },
  );

  app.get(
    '/exports/:id',
    {
      schema: {
        operationId: 'getExport',
        summary: 'An export and its progress',
        description: "Needs the export's resource's read scope.",
        tags,
        params: IdParams,
        response: { 200: answer(ExportObject, 'The export.'), ...errorResponses(403, 404) },
      },
      config: { scope: EITHER_READ, notFoundText: exportMessages.exportNotFound },
    },
    (request) => readable(request),
  );

  app.get(
    '/exports/:id/file',
    {
      schema: {
        operationId: 'getExportFile',
        summary: "An export's file",
        description:
          'The file, streamed: CSV (`text/csv; charset=utf-8`) or NDJSON (`application/x-ndjson`), as an attachment. ' +
          'With `Accept-Encoding: gzip` it comes gzipped (`Content-Encoding: gzip`). A 409 until the export has ' +
          "succeeded; a 410 once the file is deleted. Needs the export's resource's read scope.",
        tags,
        params: IdParams,
        response: {
          200: {
            description: 'The file.',
            content: {
              'text/csv': { schema: Type.String({ description: 'RFC 4180 CSV, a header row of API field names.' }) },
              'application/x-ndjson': { schema: Type.String({ description: 'One JSON object per line.' }) },
            },
            headers: {
              'Content-Disposition': { type: 'string', description: '`attachment; filename=…`.' },
              'Content-Encoding': { type: 'string', enum: ['gzip'], description: 'With `Accept-Encoding: gzip`.' },
            },
          },
          ...errorResponses(403, 404),
          ...notReady,
          ...expired,
        },
      },
      config: { scope: EITHER_READ, notFoundText: exportMessages.exportNotFound },
    },
    async (request, reply) => {
      const found = await readable(request);
      if (found.status === 'expired') {
        throw new ApiError({ statusCode: 410, code: 'export_expired', text: exportMessages.expired });
      }
      if (found.status === 'failed') throw conflict(exportMessages.failed);
      if (found.status !== 'succeeded') throw conflict(exportMessages.notReady, { retryAfterSeconds: 2 });
      return sendFile(db, request, reply, found);
    },
  );
};

function mayRead(held: ReadonlySet<string>, scope: string): void {
  const lacking = lackingScopes(scope as never, held);
  if (lacking !== undefined) throw forbidden(authMessages.scopeLacking(lacking));
}

function sendFile(db: Db, request: FastifyRequest, reply: FastifyReply, found: ExportObject): FastifyReply {
  const gzip = acceptsGzip(request.headers['accept-encoding']);
  const { tenantId } = principalOf(request);
  const extension = found.format === 'csv' ? 'csv' : 'ndjson';
  reply
    .header('content-type', CONTENT_TYPES[found.format])
    .header('content-disposition', `attachment; filename="funil-${found.resource}s-${found.id}.${extension}"`)
    .header('vary', 'accept-encoding');
  if (gzip) reply.header('content-encoding', 'gzip');
  const stream = fileStream(db, tenantId, found.id, gzip, (error) =>
    request.log.warn({ err: error }, 'export file: stream failed'),
  );
  return reply.send(stream);
}
