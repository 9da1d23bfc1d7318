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

/** SPEC §13: the calling system's own id for a record, unique per tenant and resource; ""/null clear it. */
export const ExternalId = Nullable(
  TrimmedString({
    maxLength: 200,
    description: 'Your system\'s own id for this record: unique per tenant and resource. "" or null clears it.',
    examples: ['crm-4711'],
  }),
);
