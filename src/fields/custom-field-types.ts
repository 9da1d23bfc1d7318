import type { ValidateFunction } from 'ajv';
import { bodyValidator } from '../shared/validation.js';

/** SPEC §16: the types of a custom field. */
export const CUSTOM_FIELD_TYPES = [
  'text',
  'number',
  'integer',
  'boolean',
  'date',
  'datetime',
  'select',
  'multiselect',
] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

/** The types whose values come from the field's `options`. */
export const CHOICE_TYPES: readonly CustomFieldType[] = ['select', 'multiselect'];

/** SPEC §16's limits. */
export const CUSTOM_LIMITS = { textLength: 1000, options: 100, optionLength: 100, fieldsPerResource: 100 } as const;

/** The resources that have custom fields, as `/fields` names them. */
export const CUSTOM_RESOURCES = ['lead', 'customer'] as const;
export type CustomResource = (typeof CUSTOM_RESOURCES)[number];

export const CUSTOM_KEY_PATTERN = '^[a-z][a-z0-9_]{0,39}$';

/** A value as a record holds it: never null (a cleared key is absent). */
export type CustomValue = string | number | boolean | string[];

/**
 * The JSON Schema of one value of each type. Choices are checked against the field's options
 * apart (CustomFieldSet), so these few schemas serve every tenant and are compiled once.
 */
export const VALUE_SCHEMAS: Readonly<Record<CustomFieldType, Record<string, unknown>>> = {
  text: { type: 'string', maxLength: CUSTOM_LIMITS.textLength },
  number: { type: 'number' },
  // Integers a JavaScript client reads back exactly.
  integer: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
  boolean: { type: 'boolean' },
  date: { type: 'string', format: 'date' },
  datetime: { type: 'string', format: 'date-time' },
  select: { type: 'string', maxLength: CUSTOM_LIMITS.optionLength },
  multiselect: {
    type: 'array',
    items: { type: 'string', maxLength: CUSTOM_LIMITS.optionLength },
    maxItems: CUSTOM_LIMITS.options,
    uniqueItems: true,
  },
};

let validators: Readonly<Record<CustomFieldType, ValidateFunction>> | undefined;

/** The compiled check of a type's values. */
export function valueValidator(type: CustomFieldType): ValidateFunction {
  if (!validators) {
    const ajv = bodyValidator();
    validators = Object.fromEntries(
      CUSTOM_FIELD_TYPES.map((name) => [name, ajv.compile(VALUE_SCHEMAS[name])]),
    ) as Record<CustomFieldType, ValidateFunction>;
  }
  return validators[type];
}

/** A valid value as it is stored: timestamps in UTC with milliseconds (SPEC §1), like every other. */
export function storedValue(type: CustomFieldType, value: CustomValue): CustomValue {
  return type === 'datetime' ? new Date(value as string).toISOString() : value;
}

/**
 * A list filter's text (`custom.size=10`) as the JSON value the field stores, so that
 * `custom @> {"size": 10}` compares like with like; undefined when the text cannot be one. For a
 * multiselect, the one option the values must contain.
 */
export function filterValue(type: CustomFieldType, raw: string): CustomValue | undefined {
  // Trimmed, as stored values are.
  const text = raw.trim();
  switch (type) {
    case 'number':
    case 'integer': {
      const number = text === '' ? Number.NaN : Number(text);
      return valueValidator(type)(number) ? number : undefined;
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : undefined;
    case 'multiselect':
      return [text];
    default:
      return valueValidator(type)(text) ? storedValue(type, text) : undefined;
  }
}
