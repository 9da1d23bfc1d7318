import { ApiError, type FieldIssue, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages, type Text } from '../shared/messages.js';
import { phraseOfErrors } from '../shared/validation.js';
import { customFieldPhrases } from './custom-field.messages.js';
import {
  CHOICE_TYPES,
  type CustomFieldType,
  type CustomResource,
  type CustomValue,
  filterValue,
  storedValue,
  VALUE_SCHEMAS,
  valueValidator,
} from './custom-field-types.js';

/** A field a tenant defined (SPEC §16). */
export interface CustomFieldDefinition {
  readonly resource: CustomResource;
  readonly key: string;
  readonly label: string;
  readonly type: CustomFieldType;
  readonly options: readonly string[] | null;
  readonly required: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An update's custom values: a value sets its key, null clears it. */
export type CustomPatch = Record<string, CustomValue | null>;

/**
 * One tenant's fields of one resource, and the rules of their values: what a create may store,
 * what an update may change, what a list filter compares with. Keys are looked up in a Map, never
 * on a plain object: a key may be any name the pattern allows (`constructor` among them).
 */
export class CustomFieldSet {
  readonly #byKey: ReadonlyMap<string, CustomFieldDefinition>;

  constructor(
    readonly resource: CustomResource,
    readonly definitions: readonly CustomFieldDefinition[],
  ) {
    this.#byKey = new Map(definitions.map((definition) => [definition.key, definition]));
  }

  /** Whether the tenant defined `key` for this resource. */
  has(key: string): boolean {
    return this.#byKey.has(key);
  }

  /** The type of the field `key`, or undefined when there is no such field. */
  typeOf(key: string): CustomFieldType | undefined {
    return this.#byKey.get(key)?.type;
  }

  /**
   * A create's values, as stored: each one valid, "" and null left out (no value), every required
   * field present. Throws the 400 naming each `custom.<key>` at fault.
   */
  forCreate(input: Readonly<Record<string, unknown>> | null | undefined): Record<string, CustomValue> {
    const { values, issues } = this.#checked(input ?? {});
    for (const definition of this.definitions) {
      const given = Object.hasOwn(values, definition.key) ? values[definition.key] : null;
      if (definition.required && given === null && !issues.has(definition.key)) {
        issues.set(definition.key, fieldMessages.required());
      }
    }
    this.#throwIfAny(issues);
    return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== null)) as Record<
      string,
      CustomValue
    >;
  }

  /** An update's changes, as stored: null (or "") clears a key, which a required field refuses. */
  forUpdate(input: Readonly<Record<string, unknown>>): CustomPatch {
    const { values, issues } = this.#checked(input);
    for (const [key, value] of Object.entries(values)) {
      if (value === null && this.#byKey.get(key)?.required) issues.set(key, customFieldPhrases.cannotClear());
    }
    this.#throwIfAny(issues);
    return values;
  }

  /** The `@>` operand of the filters `custom.<key>=<text>`; a 400 names a filter that cannot match a field's values. */
  filter(texts: ReadonlyMap<string, string>): Record<string, CustomValue> {
    const wanted: Record<string, CustomValue> = {};
    const issues = new Map<string, Text>();
    for (const [key, text] of texts) {
      const definition = this.#byKey.get(key);
      const value = definition && filterValue(definition.type, text);
      if (value === undefined) {
        issues.set(key, definition ? phraseOfType(definition.type) : customFieldPhrases.notDefined());
      } else {
        wanted[key] = value;
      }
    }
    this.#throwIfAny(issues);
    return wanted;
  }

  /** The JSON Schema of a create's `custom` (SPEC §16: machine-readable, for forms and validators). */
  jsonSchema(): Record<string, unknown> {
    const properties: Record<string, unknown> = {};
    for (const { key, label, type, options } of this.definitions) {
      const schema: Record<string, unknown> = { title: label, 'x-funil-type': type, ...VALUE_SCHEMAS[type] };
      if (type === 'select') schema.enum = options;
      if (type === 'multiselect') schema.items = { type: 'string', enum: options };
      properties[key] = schema;
    }
    return {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: `custom (${this.resource})`,
      type: 'object',
      properties,
      required: this.definitions.filter((definition) => definition.required).map((definition) => definition.key),
      additionalProperties: false,
    };
  }

  /**
   * Each value checked and normalised (trimmed text, UTC timestamps). `null` clears any field; the
   * empty value of a field's own shape clears it too, as web forms send one for an empty input
   * ("" for the types written as text, [] for a multiselect), and is a 400 on any other type.
   */
  #checked(input: Readonly<Record<string, unknown>>) {
    // No prototype: a field may be named `constructor`, and a missing one must read as missing.
    const values: CustomPatch = Object.create(null);
    const issues = new Map<string, Text>();
    for (const [key, raw] of Object.entries(input)) {
      const definition = this.#byKey.get(key);
      if (!definition) {
        issues.set(key, customFieldPhrases.notDefined());
        continue;
      }
      // Trimmed, as every text of a body (SPEC §3).
      const value = typeof raw === 'string' ? raw.trim() : raw;
      if (value === null || isEmptyOf(definition.type, value)) {
        values[key] = null;
        continue;
      }
      const validate = valueValidator(definition.type);
      if (!validate(value)) {
        issues.set(key, phraseOfErrors(validate.errors ?? []));
        continue;
      }
      const outside =
        CHOICE_TYPES.includes(definition.type) &&
        [value].flat().find((v) => !definition.options?.includes(v as string));
      if (outside !== undefined && outside !== false) {
        issues.set(key, fieldMessages.oneOf(definition.options ?? []));
        continue;
      }
      values[key] = storedValue(definition.type, value as CustomValue);
    }
    return { values, issues };
  }

  #throwIfAny(issues: ReadonlyMap<string, Text>): void {
    if (issues.size === 0) return;
    const details: FieldIssue[] = [...issues].map(([key, phrase]) => ({
      field: `custom.${key}`,
      message: fieldMessage(`custom.${key}`, phrase),
    }));
    throw new CustomValuesRefused(details);
  }
}

/** A 400 for custom values or filters that the tenant's definitions, as this instance knows them, refuse. */
export class CustomValuesRefused extends ApiError {
  constructor(details: readonly FieldIssue[]) {
    super(validationFailed(details));
  }
}

/** What a filter's text must look like to compare with a field of this type. */
function phraseOfType(type: CustomFieldType) {
  switch (type) {
    case 'number':
      return fieldMessages.type('number');
    case 'integer':
      return fieldMessages.type('integer');
    case 'boolean':
      return fieldMessages.oneOf(['true', 'false']);
    case 'date':
      return fieldMessages.date();
    case 'datetime':
      return fieldMessages.dateTime();
    default:
      return fieldMessages.maxLength(VALUE_SCHEMAS[type].maxLength as number);
  }
}

/** The types whose values are written as text: an empty input of a web form sends "" for them. */
const TEXT_TYPES: readonly CustomFieldType[] = ['text', 'select', 'date', 'datetime'];

/** Whether `value` is the empty value of `type`'s own shape (a cleared input), not a value of another type. */
function isEmptyOf(type: CustomFieldType, value: unknown): boolean {
  if (value === '') return TEXT_TYPES.includes(type);
  return type === 'multiselect' && Array.isArray(value) && value.length === 0;
}
