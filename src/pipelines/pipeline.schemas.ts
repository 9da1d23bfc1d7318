import { type Static, Type } from 'typebox';
import { IgnoredOnWrite, StringEnum, Timestamp, TrimmedString } from '../shared/schemas.js';
import { KEPT_STAGE_KEY_PATTERN, PIPELINE_LIMITS, STAGE_KEY_PATTERN, STAGE_KINDS } from './pipeline.types.js';

const Id = Type.String({ format: 'uuid' });
const Name = TrimmedString({
  minLength: 1,
  maxLength: 100,
  description: 'The name people see.',
  examples: ['Inbound'],
});
const Kind = StringEnum(STAGE_KINDS, {
  description: '`open` while the lead is in play; `won` and `lost` are the ends the summary and the console count.',
});

const StageInput = Type.Object(
  {
    key: Type.String({
      pattern: KEPT_STAGE_KEY_PATTERN,
      description:
        "A lead's `status` in this stage, unique in the pipeline. A new key: a lower-case letter, then up to 39 of " +
        `a-z, 0-9, _ (${STAGE_KEY_PATTERN}); a key the pipeline already has is kept as it is.`,
      examples: ['qualified'],
    }),
    label: TrimmedString({
      minLength: 1,
      maxLength: 100,
      description: 'The name people see.',
      examples: ['Qualified'],
    }),
    kind: Kind,
  },
  { additionalProperties: false },
);

const Stages = Type.Array(StageInput, {
  minItems: 1,
  maxItems: PIPELINE_LIMITS.stagesPerPipeline,
  description: `In board order, 1–${PIPELINE_LIMITS.stagesPerPipeline}. A new lead starts in the first.`,
});

const Default = Type.Boolean({
  description: "New leads without a `pipeline` go to the tenant's default pipeline; exactly one is the default.",
});

const EXAMPLE_STAGES = [
  { key: 'scheduled', label: 'Agendado', kind: 'open' },
  { key: 'attended', label: 'Compareceu', kind: 'open' },
  { key: 'enrolled', label: 'Matrícula', kind: 'won' },
  { key: 'gave_up', label: 'Desistiu', kind: 'lost' },
];

export const PipelineCreate = Type.Object(
  { name: Name, stages: Stages, default: Type.Optional(Default) },
  { additionalProperties: false, examples: [{ name: 'Clinic', stages: EXAMPLE_STAGES }] },
);
export type PipelineCreate = Static<typeof PipelineCreate>;

export const PipelineUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    stages: Type.Optional(Stages),
    default: Type.Optional(Default),
    id: IgnoredOnWrite,
    createdAt: IgnoredOnWrite,
    updatedAt: IgnoredOnWrite,
  },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Clinic (2027)' }] },
);
export type PipelineUpdate = { name?: string; stages?: PipelineCreate['stages']; default?: boolean };

export const PipelineObject = Type.Object(
  {
    id: Id,
    name: Type.String(),
    default: Type.Boolean(),
    stages: Type.Array(
      Type.Object({ key: Type.String(), label: Type.String(), kind: Kind }, { additionalProperties: false }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const PipelineList = Type.Array(PipelineObject);

export const PipelineParams = Type.Object({ id: Id }, { additionalProperties: false });

export const MoveQuery = Type.Object(
  {
    moveTo: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'Where the leads of what is removed go: `<stage key>` (of this pipeline; when deleting a pipeline, of ' +
          'the default one) or `<pipeline id>:<stage key>`. They are moved in batches, each lead with its ' +
          '`lead.status_changed` event.',
        examples: ['qualified'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type MoveQuery = Static<typeof MoveQuery>;
