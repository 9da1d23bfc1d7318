import type { FastifyPluginAsync } from 'fastify';
import { actorOf, principalOf } from '../http/authenticate.js';
import { answer, conflictResponse, errorResponses, IdParams, SuccessBody } from '../http/schemas.js';
import { MoveQuery, PipelineCreate, PipelineList, PipelineObject, PipelineUpdate } from './pipeline.schemas.js';
import type { PipelineService } from './pipeline.service.js';
import { PIPELINE_LIMITS } from './pipeline.types.js';

interface PipelineRoutesOptions {
  pipelines: PipelineService;
}

const read = { scope: 'leads:read' } as const;
const write = { scope: 'pipelines:write' } as const;
const tags = ['pipelines'];
const byId = '/pipelines/:id';
const MOVED =
  'Leads in a stage removed need `moveTo` (else a 409 with their count, `leadCount`); they are then moved in ' +
  'batches, each with its `lead.status_changed` event: before the answer on most tenants, within seconds after it ' +
  'on large ones.';

/** SPEC §20: each tenant's pipelines and their stages, kept as data. */
export const pipelineRoutes: FastifyPluginAsync<PipelineRoutesOptions> = async (app, { pipelines: service }) => {
  app.get(
    '/pipelines',
    {
      schema: {
        operationId: 'listPipelines',
        summary: "List the tenant's pipelines",
        description: 'Oldest first, each with its stages in board order.',
        tags,
        response: { 200: answer(PipelineList, "The tenant's pipelines."), ...errorResponses(403) },
      },
      config: read,
    },
    async (request) => service.list(request.db, principalOf(request).tenantId),
  );

  app.post(
    '/pipelines',
    {
      schema: {
        operationId: 'createPipeline',
        summary: 'Create a pipeline',
        description: `At most ${PIPELINE_LIMITS.pipelinesPerTenant} per tenant, each of 1–${PIPELINE_LIMITS.stagesPerPipeline} stages. \`default: true\` makes it the tenant's default.`,
        tags,
        body: PipelineCreate,
        response: {
          201: answer(PipelineObject, 'The pipeline created.'),
          ...errorResponses(400, 403, 413, 415),
          ...conflictResponse(
            `the tenant has ${PIPELINE_LIMITS.pipelinesPerTenant} pipelines already, the most it may have`,
          ),
        },
      },
      config: write,
    },
    async (request, reply) => {
      const created = await service.create(request.db, actorOf(request), request.body as PipelineCreate);
      reply.code(201);
      return created;
    },
  );

  app.get(
    byId,
    {
      schema: {
        operationId: 'getPipeline',
        summary: 'Get a pipeline',
        tags,
        params: IdParams,
        response: { 200: answer(PipelineObject, 'The pipeline.'), ...errorResponses(403, 404) },
      },
      config: read,
    },
    async (request) => service.find(request.db, principalOf(request).tenantId, (request.params as IdParams).id),
  );

  app.put(
    byId,
    {
      schema: {
        operationId: 'updatePipeline',
        summary: 'Rename a pipeline, change its stages, or make it the default',
        description:
          '`stages`, when sent, is the whole list in board order: relabelling, reordering, adding and changing ' +
          `kinds take effect at once. ${MOVED}`,
        tags,
        params: IdParams,
        querystring: MoveQuery,
        body: PipelineUpdate,
        response: {
          200: answer(PipelineObject, 'The pipeline, changed.'),
          ...errorResponses(400, 403, 404, 413, 415),
          ...conflictResponse('leads are in a stage removed, and no `moveTo` says where they go (`leadCount`)'),
        },
      },
      config: write,
    },
    async (request) => {
      const { id } = request.params as IdParams;
      const { moveTo } = request.query as MoveQuery;
      return service.update(request.db, actorOf(request), id, request.body as PipelineUpdate, moveTo);
    },
  );

  app.delete(
    byId,
    {
      schema: {
        operationId: 'deletePipeline',
        summary: 'Delete a pipeline',
        description: `The default pipeline cannot be deleted: make another the default first. ${MOVED}`,
        tags,
        params: IdParams,
        querystring: MoveQuery,
        response: {
          200: answer(SuccessBody, 'Deleted.'),
          ...errorResponses(400, 403, 404),
          ...conflictResponse('it is the default pipeline, or it holds leads and no `moveTo` says where they go'),
        },
      },
      config: write,
    },
    async (request) => {
      const { id } = request.params as IdParams;
      await service.delete(request.db, actorOf(request), id, (request.query as MoveQuery).moveTo);
      return { success: true as const };
    },
  );
};
