import { type Static, type TSchema, Type } from 'typebox';

/** `type: [T, "null"]`: OpenAPI 3.1's nullable, and cheaper to serialise than an anyOf. */
export function Nullable<T extends TSchema>(schema: T) {
  const { type } = schema as { type?: string };
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
}

export function StringEnum<const T extends readonly string[]>(values: T, options: object = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A string that is trimmed before validation. */
export function TrimmedString(options: {
  minLength?: number;
  maxLength: number;
  format?: string;
  lowercase?: boolean;
  description?: string;
  examples?: unknown[];
}) {
  const { lowercase, ...rest } = options;
  return Type.String({ ...rest, transform: lowercase ? ['trim', 'toLowerCase'] : ['trim'] });
}

/** Read-only fields a client may echo back in a body; they are accepted and ignored (SPEC §3). */
export const IgnoredOnWrite = Type.Optional(Type.Unknown({ description: 'Read-only: ignored when sent.' }));

export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-21T10:00:00.000Z'] });

export const IdParams = Type.Object(
  { id: Type.String({ format: 'uuid', description: 'The record id (UUID).' }) },
  { additionalProperties: false },
);
export type IdParams = Static<typeof IdParams>;

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.String({ description: 'Human-readable message, pt-BR by default; English with Accept-Language: en.' }),
    code: Type.String({ description: 'Stable machine code, independent of language.' }),
    details: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }, { additionalProperties: false })),
    ),
    existingId: Type.Optional(Type.String({ format: 'uuid' })),
    requestId: Type.Optional(Type.String()),
  },
  { additionalProperties: false, $id: 'ErrorBody' },
);

export const SuccessBody = Type.Object({ success: Type.Literal(true) }, { additionalProperties: false });

/** The documented error answers of a route, each in the SPEC §2 shape. */
export function errorResponses<const S extends readonly number[]>(...statuses: S) {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBody])) as { [K in S[number]]: typeof ErrorBody };
}
