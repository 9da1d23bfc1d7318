import { Type } from 'typebox';
import { CustomInput, CustomValues } from '../fields/custom-value.schemas.js';
import { recordFields } from '../records/record-fields.js';
import { ExternalId, Nullable, Timestamp, TrimmedString } from '../shared/schemas.js';

const Id = Type.String({ format: 'uuid' });

/**
 * A lead's fields, declared once (SPEC §3), in the order of the full object. Its `status` is a
 * stage of its pipeline, each tenant's own (SPEC §20): checked with the write (LeadStages), not here.
 */
const LEAD_FIELD_TABLE = {
  _id: { read: Id, column: 'id' },
  name: {
    read: Type.String(),
    write: TrimmedString({ minLength: 1, maxLength: 200, examples: ['Maria Silva'] }),
    required: true,
  },
  email: {
    read: Nullable(Type.String()),
    write: Nullable(
      TrimmedString({ maxLength: 254, format: 'email', lowercase: true, examples: ['maria@example.com'] }),
    ),
    default: null,
  },
  phone: {
    read: Nullable(Type.String()),
    write: Nullable(TrimmedString({ maxLength: 50, examples: ['+55 11 91234-5678'] })),
    default: null,
  },
  source: {
    read: Nullable(Type.String()),
    write: Nullable(TrimmedString({ maxLength: 100, examples: ['website'] })),
    default: null,
  },
  pipeline: {
    read: Type.String({ format: 'uuid', description: 'The pipeline the lead is in (`GET /pipelines`).' }),
    write: Type.String({
      format: 'uuid',
      description:
        "The pipeline's id; default: the tenant's default pipeline. Changed without `status`, the lead goes to " +
        "the new pipeline's first stage.",
    }),
    column: 'pipelineId',
    orColumn: 'tenantId',
  },
  status: {
    read: Type.String(),
    write: Type.String({
      maxLength: 50,
      description: "A stage key of the lead's pipeline (`GET /pipelines`); default: its first stage.",
      examples: ['contacted'],
    }),
  },
  score: { read: Type.Integer(), write: Type.Integer({ minimum: 0, maximum: 100, examples: [40] }), default: 0 },
  lastContact: {
    read: Nullable(Timestamp),
    write: Nullable(Type.String({ format: 'date-time', examples: ['2026-11-20T15:30:00.000Z'] })),
    default: null,
    storage: 'timestamp',
  },
  notes: { read: Nullable(Type.String()), write: Nullable(Type.String({ maxLength: 10_000 })), default: null },
  externalId: { read: Nullable(Type.String()), write: ExternalId, default: null },
  customerId: {
    read: Nullable(
      Type.String({
        format: 'uuid',
        description: 'The customer this lead was converted to (`POST /leads/{id}/convert`).',
      }),
    ),
  },
  custom: { read: CustomValues, write: CustomInput, default: {}, storage: 'object' },
  tenant: { read: Id, column: 'tenantId' },
  createdBy: { read: Id },
  createdAt: { read: Timestamp, storage: 'timestamp' },
  updatedAt: { read: Timestamp, storage: 'timestamp' },
} as const;

/** Seed §2.1 rule 2: list items carry exactly these nine fields. */
const LEAD_LIST_KEYS = [
  '_id',
  'name',
  'email',
  'status',
  'score',
  'lastContact',
  'source',
  'createdAt',
  'updatedAt',
] as const;

export const leadFields = recordFields(LEAD_FIELD_TABLE, LEAD_LIST_KEYS);

export type LeadFields = typeof leadFields;
export type LeadFieldTable = typeof LEAD_FIELD_TABLE;
export type LeadListKeys = typeof LEAD_LIST_KEYS;
