import { type Static, Type } from 'typebox';
import { Nullable, StringEnum, Timestamp } from '../shared/schemas.js';

export const EXPORT_RESOURCES = ['lead', 'customer'] as const;
export type ExportResource = (typeof EXPORT_RESOURCES)[number];
export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'expired'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** The most fields an export may name (a resource has fewer than 20, and at most 100 custom fields). */
export const MAX_EXPORT_FIELDS = 150;

export const CreateExport = Type.Object(
  {
    resource: StringEnum(EXPORT_RESOURCES, { description: 'What to export.' }),
    format: StringEnum(EXPORT_FORMATS, {
      description:
        '`csv`: RFC 4180, UTF-8 without BOM, CRLF line ends, a header row of API field names; `ndjson`: one JSON ' +
        'object per line.',
    }),
    query: Type.Optional(
      Type.Record(
        Type.String({ maxLength: 100 }),
        Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean()]),
        {
          maxProperties: 50,
          description:
            "The list's filters and sort, exactly as `GET /leads` or `GET /customers` takes them in its query string " +
            '(`status`, `pipeline`, `source`, `q`, `email`, `createdSince`, `scoreMin`, `custom.<key>`, `sort`, …), ' +
            'without `limit` and `cursor`: the export holds every matching row.',
          examples: [{ status: 'new,qualified', sort: 'createdAt' }],
        },
      ),
    ),
    fields: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 60 }), {
        minItems: 1,
        maxItems: MAX_EXPORT_FIELDS,
        uniqueItems: true,
        description:
          'The API fields to export, in this order (`custom.<key>` for one of your own fields, `custom` for all of ' +
          'them); default: every field of the full object.',
        examples: [['_id', 'name', 'email', 'status', 'custom.plan']],
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        resource: 'lead',
        format: 'csv',
        query: { status: 'new,qualified', sort: 'createdAt' },
        fields: ['_id', 'name', 'email'],
      },
    ],
  },
);
export type CreateExport = Static<typeof CreateExport>;

export const ExportAccepted = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: StringEnum(EXPORT_STATUSES),
  },
  { additionalProperties: false },
);

export const ExportObject = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    resource: StringEnum(EXPORT_RESOURCES),
    format: StringEnum(EXPORT_FORMATS),
    status: StringEnum(EXPORT_STATUSES, {
      description:
        '`queued`, `running`, then `succeeded` (the file can be fetched) or `failed`; `expired` once the file is ' +
        'deleted (24 hours after it was made, or when a person whose data it may hold was erased).',
    }),
    total: Nullable(Type.Integer({ minimum: 0, description: 'Rows in the file; known once it succeeded.' })),
    processed: Type.Integer({ minimum: 0, description: 'Rows written so far.' }),
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    expiresAt: Nullable({ ...Timestamp, description: 'When the file is deleted.' }),
    fileBytes: Nullable(Type.Integer({ minimum: 0, description: 'Size of the file, uncompressed.' })),
  },
  { additionalProperties: false },
);
export type ExportObject = Static<typeof ExportObject>;
