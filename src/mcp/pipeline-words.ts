import { type TSchema, Type } from 'typebox';
import type { Pipeline, Stage } from '../pipelines/pipeline.types.js';
import type { TenantPipelines } from '../pipelines/tenant-pipelines.js';
import { StringEnum } from '../shared/schemas.js';
import { type McpTool, withProperties } from './mcp-tool.js';

/**
 * The most characters a tenant's stages take in a description, with their labels and kinds; past
 * it (a tenant may have 20 pipelines of 50 stages), a description names the pipelines and leaves
 * their stages to list_pipelines. The `status` enums name every key either way.
 */
const STAGE_WORDS_MAX = 4_000;

/**
 * A tenant's pipelines in words for a model (SPEC §19, §20): with one pipeline its stages in
 * order; with several, each one's name, id and stages. Names and labels are the tenant's own
 * text, so they are quoted as JSON strings.
 */
export function stageWords(pipelines: TenantPipelines): string {
  const full = pipelinesInWords(pipelines, true);
  return full.length <= STAGE_WORDS_MAX ? full : pipelinesInWords(pipelines, false);
}

function pipelinesInWords({ all }: TenantPipelines, withStages: boolean): string {
  const stagesOf = (pipeline: Pipeline) => pipeline.stages.map(stageInWords).join(' → ');
  const [only] = all;
  if (all.length === 1 && only) {
    return withStages
      ? `The stages of this account's pipeline, in order: ${stagesOf(only)}.`
      : `This account has one pipeline, ${pipelineName(only)}; list_pipelines names its stages.`;
  }
  const intro =
    `This account has ${all.length} pipelines; a lead is in one of them (its \`pipeline\`), and its status is a ` +
    'stage of that one.';
  if (!withStages) return `${intro} They are ${all.map(pipelineName).join(', ')}; list_pipelines names their stages.`;
  const each = all.map((pipeline) => `${pipelineName(pipeline)}: ${stagesOf(pipeline)}.`);
  return [intro, "Each pipeline's stages, in order:", ...each].join(' ');
}

/** `"new" (open)`, or `"attended" ("Compareceu", open)` when the label says more than the key. */
function stageInWords(stage: Stage): string {
  const label = stage.label === stage.key ? '' : `${JSON.stringify(stage.label)}, `;
  return `${JSON.stringify(stage.key)} (${label}${stage.kind})`;
}

/** `"Clinic" (id 0192…)`, the default pipeline marked. */
function pipelineName(pipeline: Pipeline): string {
  return `${JSON.stringify(pipeline.name)} (id ${pipeline.id}${pipeline.default ? ', the default' : ''})`;
}

/**
 * `tool` as each tenant's `tools/list` shows it: its description followed by the tenant's stages in
 * words (and `more`), and the `arguments` of its input named in the tenant's terms.
 */
export function listedWithStages(
  tool: McpTool,
  argumentsFor: (pipelines: TenantPipelines) => Record<string, TSchema>,
  more: (pipelines: TenantPipelines) => string = () => '',
): McpTool {
  return {
    ...tool,
    listedFor: (pipelines) => ({
      description: [tool.description, stageWords(pipelines), more(pipelines)].filter(Boolean).join(' '),
      input: withProperties(tool.input, argumentsFor(pipelines)),
    }),
  };
}

/** A `status` argument: one of the tenant's stage keys, of any of its pipelines. */
export function stageArgument(pipelines: TenantPipelines, description: string): TSchema {
  return StringEnum(pipelines.keys(), { description });
}

/** The most stage keys a search names at once. */
const SEARCH_STATUSES_MAX = 100;

/**
 * search_leads' `status` as a call is checked: one stage key, a list of them, or several
 * comma-separated as on REST; LeadService checks the keys against the tenant's pipelines.
 */
export const SearchStatuses = Type.Optional(
  Type.Unsafe<string | string[]>({
    type: ['string', 'array'],
    minLength: 1,
    maxLength: 1000,
    items: { type: 'string', minLength: 1, maxLength: 50 },
    minItems: 1,
    maxItems: SEARCH_STATUSES_MAX,
  }),
);

/** search_leads' `status` as listed to a tenant: one of its stage keys, or a list of them. */
export function stagesArgument(pipelines: TenantPipelines, description: string): TSchema {
  const key = StringEnum(pipelines.keys());
  const list = Type.Array(key, { minItems: 1, maxItems: SEARCH_STATUSES_MAX });
  return Type.Unsafe<string | string[]>({ description, anyOf: [key, list] });
}

/** A `pipeline` argument: a pipeline's id, this tenant's named in its description. */
export function pipelineArgument(pipelines: TenantPipelines, description: string): TSchema {
  const names = pipelines.all.map(pipelineName).join(', ');
  return Type.String({ format: 'uuid', description: `${description} This account's pipelines: ${names}.` });
}
