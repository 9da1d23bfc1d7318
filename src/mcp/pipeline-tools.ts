import { Type } from 'typebox';
import { leadSummary } from '../leads/lead-summary.js';
import {
  DEFAULT_SUMMARY_DAYS,
  LeadSummary,
  LeadSummaryQuery,
  MAX_SUMMARY_DAYS,
} from '../leads/lead-summary.schemas.js';
import { PipelineList } from '../pipelines/pipeline.schemas.js';
import type { McpServices } from './mcp-services.js';
import { defineTool, type McpTool } from './mcp-tool.js';
import { listedWithStages, pipelineArgument } from './pipeline-words.js';

/** SPEC §19 and §20: the tenant's pipelines, and one pipeline in numbers, over the REST routes' services. */
export function pipelineTools(services: McpServices): McpTool[] {
  const list = defineTool({
    name: 'list_pipelines',
    title: "The account's pipelines",
    description:
      'The sales pipelines of this account, each a list of stages in board order that its leads move through. A ' +
      'lead is in one pipeline (its `pipeline`, a pipeline id) and its `status` is the key of a stage of that ' +
      'pipeline. Each stage has a key (what `status` holds), a label (the name people use) and a kind: open ' +
      'while the lead is in play, won or lost at the ends. New leads that name no pipeline go to the default ' +
      'one. Returns {items}: every pipeline (id, name, default, stages, createdAt, updatedAt), oldest first. Use ' +
      'it to learn which statuses a lead may take, or which pipeline id to pass to create_lead, update_lead, ' +
      'search_leads or pipeline_summary.',
    scope: 'leads:read',
    effect: 'read',
    input: Type.Object({}, { additionalProperties: false }),
    output: Type.Object({ items: PipelineList }, { additionalProperties: false }),
    run: async (call) => ({ items: await services.pipelines.list(call.db, call.tenantId) }),
  });

  const summary = defineTool({
    name: 'pipeline_summary',
    title: 'A pipeline in numbers',
    description:
      'Counts of the leads of one pipeline (the default one unless `pipeline` names another) created in a period ' +
      `(default: the last ${DEFAULT_SUMMARY_DAYS} UTC days, today included; at most ${MAX_SUMMARY_DAYS} days), ` +
      'optionally of one source: total, pipeline (the id counted), byStatus (every stage of that pipeline in ' +
      'order, with its kind and count; then any status no stage has now, kind null), bySource (largest first; ' +
      'null: no source) and perDay (each UTC day). For "how is the pipeline doing?" or "how many leads came ' +
      'from the website this month?".',
    scope: 'leads:read',
    effect: 'read',
    input: LeadSummaryQuery,
    output: LeadSummary,
    run: async (call, query) =>
      leadSummary(call.db, call.tenantId, await services.pipelineCatalog.of(call.db, call.tenantId), query),
  });
  const listedSummary = listedWithStages(summary, (pipelines) => ({
    pipeline: pipelineArgument(pipelines, 'The pipeline counted (its id); default: the default pipeline.'),
  }));

  return [list, listedSummary];
}
