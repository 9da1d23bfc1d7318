import { type Static, Type } from 'typebox';
import { IgnoredOnWrite, Nullable, StringEnum, Timestamp, TrimmedString } from '../shared/schemas.js';
import {
  CUSTOM_FIELD_TYPES,
  CUSTOM_KEY_PATTERN,
  CUSTOM_LIMITS,
  CUSTOM_RESOURCES,
  type CustomFieldType,
  type CustomResource,
} from './custom-field-types.js';

const Resource = StringEnum(CUSTOM_RESOURCES, { description: 'Whose field it is: leads or customers.' });
const Key = Type.String({
  pattern: CUSTOM_KEY_PATTERN,
  description: 'The name under `custom` in records: a lower-case letter, then up to 39 of a-z, 0-9, _.',
  examples: ['utm_source'],
});
const Label = TrimmedString({
  minLength: 1,
  maxLength: 200,
  description: 'The name people see.',
  examples: ['UTM source'],
});
const FieldType = StringEnum(CUSTOM_FIELD_TYPES, {
  description:
    'text (≤ 1,000 chars), number, integer, boolean, date (YYYY-MM-DD), datetime (ISO 8601 with a zone), select ' +
    '(one of `options`), multiselect (distinct values of `options`). It cannot change.',
});
const Options = Nullable(
  Type.Array(TrimmedString({ minLength: 1, maxLength: CUSTOM_LIMITS.optionLength }), {
    minItems: 1,
    maxItems: CUSTOM_LIMITS.options,
    uniqueItems: true,
    description: 'The values a select or multiselect takes (1–100, each ≤ 100 chars); null for other types.',
    examples: [['small', 'medium', 'large']],
  }),
);
const Required = Type.Boolean({
  description: 'A create must give it a value, and no write may clear it. Records that have none keep none.',
});

export const CustomFieldCreate = Type.Object(
  {
    resource: Resource,
    key: Key,
    label: Label,
    type: FieldType,
    options: Type.Optional(Options),
    required: Type.Optional(Required),
  },
  {
    additionalProperties: false,
    examples: [
      { resource: 'lead', key: 'segment', label: 'Segment', type: 'select', options: ['retail', 'wholesale'] },
    ],
  },
);
export type CustomFieldCreate = Static<typeof CustomFieldCreate>;

export const CustomFieldUpdate = Type.Object(
  {
    label: Type.Optional(Label),
    options: Type.Optional(Options),
    required: Type.Optional(Required),
    type: Type.Optional({ ...FieldType, description: 'Accepted when it is the current type (it cannot change).' }),
    resource: IgnoredOnWrite,
    key: IgnoredOnWrite,
    createdAt: IgnoredOnWrite,
    updatedAt: IgnoredOnWrite,
  },
  { additionalProperties: false, minProperties: 1, examples: [{ label: 'Market segment', required: false }] },
);
export type CustomFieldUpdate = {
  label?: string;
  options?: string[] | null;
  required?: boolean;
  type?: CustomFieldType;
};

export const CustomField = Type.Object(
  {
    resource: Resource,
    key: Type.String(),
    label: Type.String(),
    type: FieldType,
    options: Nullable(Type.Array(Type.String())),
    required: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const CustomFieldList = Type.Array(CustomField);

export const CustomFieldListQuery = Type.Object({ resource: Type.Optional(Resource) }, { additionalProperties: false });

export const CustomFieldSchemaQuery = Type.Object({ resource: Resource }, { additionalProperties: false });

// Checked by the route before validation, as a 404 (SPEC §2: a path that names nothing); here for the document.
export const CustomFieldParams = Type.Object(
  {
    resource: StringEnum(CUSTOM_RESOURCES, { description: '`lead` or `customer`.' }),
    key: Type.String({ pattern: CUSTOM_KEY_PATTERN, description: "The field's key." }),
  },
  { additionalProperties: false },
);
export type CustomFieldParams = { resource: CustomResource; key: string };

export const CustomFieldJsonSchema = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description:
    "A JSON Schema (draft 2020-12) of `custom` in a create body of this resource: the tenant's fields as " +
    'properties (`title` is the label, `x-funil-type` the Funil type), the required ones in `required`.',
});
