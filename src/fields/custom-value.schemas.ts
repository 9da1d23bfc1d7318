import { Type } from 'typebox';
import type { CustomPatch } from './custom-field-set.js';
import { CUSTOM_LIMITS, type CustomValue } from './custom-field-types.js';

const VALUE_TYPES = [
  { type: 'string' },
  { type: 'number' },
  { type: 'boolean' },
  { type: 'array', items: { type: 'string' } },
] as const;

/**
 * `custom` in a full object: an object whose keys the tenant defines (SPEC §16). Its exact shape
 * differs by tenant; `GET /fields/schema` gives it as JSON Schema.
 */
export const CustomValues = Type.Unsafe<Record<string, CustomValue>>({
  type: 'object',
  additionalProperties: { anyOf: VALUE_TYPES },
  description:
    "Your tenant's own fields (`GET /fields`), by key (`^[a-z][a-z0-9_]{0,39}$`); `{}` when the record has none. " +
    'Their JSON Schema: `GET /fields/schema?resource=…`.',
  examples: [{ utm_source: 'google', employees: 40, interests: ['crm', 'erp'] }],
});

/** `custom` in a body: merged key by key into what the record holds; `null` clears a key. */
export const CustomInput = Type.Unsafe<CustomPatch>({
  type: 'object',
  maxProperties: CUSTOM_LIMITS.fieldsPerResource,
  // Arrays of any plain items here: a multiselect's items are checked with the tenant's field, naming `custom.<key>`.
  additionalProperties: {
    anyOf: [
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'array', items: { type: ['string', 'number', 'boolean', 'null'] } },
      { type: 'null' },
    ],
  },
  description:
    'Values of your own fields (`GET /fields`), by key. Merged into what the record holds: keys not sent keep ' +
    'their values; `null` or `""` clear one. An undefined key, a wrong type or a value outside the options is a ' +
    '400 naming `custom.<key>`; a required field must be given on create.',
  examples: [{ utm_source: 'google' }],
});
