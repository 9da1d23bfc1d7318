import { type TSchema, Type } from 'typebox';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { StringEnum, TrimmedString } from '../shared/schemas.js';

/**
 * The query parameters both lists share (SPEC §6); each list adds its own filters. `statusExample`:
 * two of the resource's statuses, comma-separated.
 */
export function listQueryFields<const F extends readonly string[]>(sortFields: F, statusExample: string) {
  const sorts = sortFields.flatMap((field) => [field, `-${field}`]);
  return {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Rows per page (1–1000).' }),
    ),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: 'Opaque: the X-Next-Cursor of the previous page.' }),
    ),
    sort: Type.Optional(
      StringEnum(sorts, { default: '-createdAt', description: 'Sort field; a `-` prefix sorts descending.' }),
    ),
    status: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'Comma-separated statuses.',
        examples: [statusExample],
      }),
    ),
    email: Type.Optional(
      TrimmedString({ minLength: 1, maxLength: 254, lowercase: true, description: 'Exact e-mail, any case.' }),
    ),
    externalId: Type.Optional(
      TrimmedString({ minLength: 1, maxLength: 200, description: "Exact externalId: your system's own id." }),
    ),
    q: Type.Optional(
      TrimmedString({
        minLength: 3,
        maxLength: 200,
        description: 'Substring of name, e-mail or phone, any case; at least 3 characters.',
      }),
    ),
    updatedSince: Type.Optional(Type.String({ format: 'date-time', description: 'Updated at or after (ISO 8601).' })),
    createdSince: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after (ISO 8601).' })),
  } satisfies Record<string, TSchema>;
}

/** SPEC §16: `custom.<key>=value` filters, any number of them; the tenant's fields say which keys exist. */
const CUSTOM_FILTER_PATTERN = '^custom\\.';

/** The list query's schema options that admit `custom.<key>` parameters beside the named ones. */
export const customFilterParameters = {
  patternProperties: {
    [CUSTOM_FILTER_PATTERN]: Type.String({
      maxLength: 1000,
      description:
        '`custom.<key>=value`: records whose custom field `key` equals the value (for a multiselect: contains it). ' +
        'Several are ANDed.',
    }),
  },
};

/**
 * The `custom.<key>` parameters of a validated query, as `[key, text]` pairs sorted by key (a
 * stable part of the cursor's binding); undefined when there are none.
 */
export function customFilters(query: Readonly<Record<string, unknown>>): [string, string][] | undefined {
  const pairs = Object.entries(query)
    .filter(([name]) => name.startsWith('custom.'))
    .map(([name, text]): [string, string] => [name.slice('custom.'.length), String(text)])
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return pairs.length > 0 ? pairs : undefined;
}

/** `status=new,won` → ['new', 'won'], each one checked against the allowed list. */
export function statusList(raw: string | undefined, allowed: readonly string[]): string[] | undefined {
  return commaList('status', raw, allowed);
}

/** A comma-separated parameter as its distinct values, sorted, each one checked against the allowed list. */
export function commaList(field: string, raw: string | undefined, allowed: readonly string[]): string[] | undefined {
  const values = commaValues(raw);
  if (values) checkAllowed(field, values, allowed);
  return values;
}

/** A comma-separated parameter as its distinct values, sorted (checked elsewhere: a tenant's stages). */
export function commaValues(raw: string | undefined): string[] | undefined {
  return raw === undefined ? undefined : [...new Set(raw.split(',').map((value) => value.trim()))].sort();
}

/** A 400 naming `field` when one of `values` is not in `allowed`. */
export function checkAllowed(field: string, values: readonly string[], allowed: readonly string[]): void {
  if (values.some((value) => !allowed.includes(value))) {
    throw validationFailed([{ field, message: fieldMessage(field, fieldMessages.oneOf(allowed)) }]);
  }
}

export function parseSort<F extends string>(sort: string | undefined): { field: F; descending: boolean } {
  const value = sort ?? '-createdAt';
  const descending = value.startsWith('-');
  return { field: (descending ? value.slice(1) : value) as F, descending };
}
