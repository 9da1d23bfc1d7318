import { type Static, Type } from 'typebox';
import { Nullable, StringEnum, Timestamp } from '../shared/schemas.js';

export const IMPORT_RESOURCES = ['lead', 'customer'] as const;
export type ImportResource = (typeof IMPORT_RESOURCES)[number];

/** SPEC §23's limits of one file. */
export const IMPORT_LIMITS = {
  bytes: 100 * 1024 * 1024,
  rows: 1_000_000,
  rowBytes: 1024 * 1024,
  chunkRows: 1_000,
} as const;

export const IMPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

const Id = Type.String({ format: 'uuid' });
const Resource = StringEnum(IMPORT_RESOURCES);
const Status = StringEnum(IMPORT_STATUSES);
const Count = Type.Integer({ minimum: 0 });

export const ImportQuery = Type.Object(
  {
    resource: StringEnum(IMPORT_RESOURCES, {
      description: 'What the rows are: leads or customers.',
      examples: ['lead'],
    }),
    upsert: Type.Optional(
      StringEnum(['email', 'externalId'], {
        description:
          'Update the record with the same e-mail (or external id) instead of creating one, as `?upsert=` on `POST /leads` does.',
      }),
    ),
    dryRun: Type.Optional(
      Type.Boolean({ description: 'Check every row and count what would happen, writing nothing.', default: false }),
    ),
  },
  { additionalProperties: false },
);
export type ImportQuery = Static<typeof ImportQuery>;

const RevertState = Type.Object(
  {
    status: StringEnum(['running', 'succeeded']),
    deleted: Type.Integer({ minimum: 0, description: 'Records the import created, now deleted.' }),
    restored: Type.Integer({ minimum: 0, description: 'Records the import updated, now as they were before it.' }),
    skipped: Type.Integer({
      minimum: 0,
      description:
        'Records changed or deleted since the import, left as they are (`GET /imports/{id}/errors?phase=revert`).',
    }),
    startedAt: Timestamp,
    finishedAt: Nullable(Timestamp),
  },
  { additionalProperties: false },
);

export const ImportObject = Type.Object(
  {
    id: Id,
    resource: Resource,
    format: StringEnum(['csv', 'ndjson']),
    upsert: Type.Unsafe<'email' | 'externalId' | null>({
      type: ['string', 'null'],
      enum: ['email', 'externalId', null],
    }),
    dryRun: Type.Boolean(),
    status: Status,
    total: Type.Integer({ minimum: 0, description: 'Rows in the file (its header not counted).' }),
    processed: Type.Integer({ minimum: 0, description: 'Rows done so far: created, updated or failed.' }),
    created: Count,
    updated: Count,
    failed: Type.Integer({ minimum: 0, description: 'Rows refused: see `GET /imports/{id}/errors`.' }),
    createdAt: Timestamp,
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    revert: Nullable(RevertState),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: '0193b0a4-5c1e-7d2a-9f00-6a1b2c3d4e5f',
        resource: 'lead',
        format: 'csv',
        upsert: 'email',
        dryRun: false,
        status: 'running',
        total: 12000,
        processed: 4000,
        created: 3950,
        updated: 40,
        failed: 10,
        createdAt: '2026-11-29T10:00:00.000Z',
        startedAt: '2026-11-29T10:00:01.000Z',
        finishedAt: null,
        revert: null,
      },
    ],
  },
);
export type ImportObject = Static<typeof ImportObject>;

export const ImportAccepted = Type.Object({ id: Id, status: Status }, { additionalProperties: false });

export const ImportErrorsQuery = Type.Object(
  {
    phase: Type.Optional(
      StringEnum(['import', 'revert'], {
        description: '`import` (default): the rows refused; `revert`: the rows a revert left as they are.',
        default: 'import',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Faults per page.' })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}[.][0-9]{1,3}$', description: 'From `X-Next-Cursor`.' })),
  },
  { additionalProperties: false },
);
export type ImportErrorsQuery = Static<typeof ImportErrorsQuery>;

export const ImportRowError = Type.Object(
  {
    row: Type.Integer({ minimum: 1, description: 'The data row, counted from 1 (the header is not a data row).' }),
    field: Nullable(Type.String({ description: 'The field at fault, when one is.' })),
    code: Type.String({
      description: 'The error code the row would have had as a request (`validation_failed`, `conflict`, …).',
    }),
    message: Type.String(),
    recordId: Nullable(Type.String({ format: 'uuid', description: 'The record at stake, for a revert.' })),
  },
  { additionalProperties: false },
);

export const ImportRowErrors = Type.Array(ImportRowError);
