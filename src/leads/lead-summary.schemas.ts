import { type Static, Type } from 'typebox';
import { STAGE_KINDS } from '../pipelines/pipeline.types.js';
import { Nullable, StringEnum, Timestamp, TrimmedString } from '../shared/schemas.js';

/** SPEC §18: a period of at most this many UTC days (`perDay` lists each of them). */
export const MAX_SUMMARY_DAYS = 366;
/** The period when none is given: the last 30 UTC days, today included. */
export const DEFAULT_SUMMARY_DAYS = 30;

export const LeadSummaryQuery = Type.Object(
  {
    createdSince: Type.Optional(
      Type.String({
        format: 'date-time',
        description: `Leads created at or after (ISO 8601). Default: the start of the UTC day ${DEFAULT_SUMMARY_DAYS - 1} days before createdUntil's.`,
      }),
    ),
    createdUntil: Type.Optional(
      Type.String({ format: 'date-time', description: 'Leads created before (ISO 8601, exclusive). Default: now.' }),
    ),
    source: Type.Optional(TrimmedString({ minLength: 1, maxLength: 100, description: 'Only leads of this source.' })),
    pipeline: Type.Optional(
      Type.String({ format: 'uuid', description: "The pipeline counted. Default: the tenant's default pipeline." }),
    ),
  },
  { additionalProperties: false },
);
export type LeadSummaryQuery = Static<typeof LeadSummaryQuery>;

const Count = Type.Integer({ minimum: 0 });

export const LeadSummary = Type.Object(
  {
    total: Count,
    pipeline: Type.String({ format: 'uuid', description: 'The pipeline counted.' }),
    byStatus: Type.Array(
      Type.Object(
        {
          status: Type.String(),
          kind: Nullable(
            StringEnum(STAGE_KINDS, {
              description: "The stage's kind; null for a status no stage has now, which some leads still hold.",
            }),
          ),
          count: Count,
        },
        { additionalProperties: false },
      ),
      { description: 'Every stage of the pipeline, in board order, zeros included; then any status no stage has now.' },
    ),
    bySource: Type.Array(
      Type.Object({ source: Nullable(Type.String()), count: Count }, { additionalProperties: false }),
      { description: 'Largest first; leads without a source under `null`.' },
    ),
    perDay: Type.Array(
      Type.Object({ date: Type.String({ format: 'date' }), count: Count }, { additionalProperties: false }),
      { description: 'Each UTC day of the period, oldest first, zeros included.' },
    ),
    createdSince: { ...Timestamp, description: 'The period counted: from (inclusive)…' },
    createdUntil: { ...Timestamp, description: '…until (exclusive).' },
  },
  { additionalProperties: false },
);
export type LeadSummary = Static<typeof LeadSummary>;
