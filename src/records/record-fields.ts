import { type Static, type TObject, type TSchema, Type } from 'typebox';
import { sqlNameOf } from '../db/column-names.js';
import { timestampText, toIso } from '../db/timestamp-text.js';
import { pickWritable } from '../shared/fields.js';
import { compileRowMapper } from '../shared/row-mapper.js';
import { IgnoredOnWrite } from '../shared/schemas.js';
import type { StoredRow } from './record-store.js';

/**
 * One field of a resource, declared once: its schema in the full object, in a body (when a client
 * may write it), and how it is stored. Everything else about the resource's fields is derived
 * from the table of these (`recordFields`): the request and response schemas, the columns a read
 * returns, the row ↔ object mapping, the writable keys and the defaults of a create.
 */
export interface FieldSpec {
  /** Its schema in the full object. */
  readonly read: TSchema;
  /** Its schema in a create or update body; absent for read-only fields. */
  readonly write?: TSchema;
  /** A create must carry it. */
  readonly required?: boolean;
  /** Its value after a create that did not send it. */
  readonly default?: unknown;
  /** The row's name for it, when not the field's own (`_id` is the row's `id`). */
  readonly column?: string;
  /** A null in its column shows as this other column's value (a lead's pipeline: null is the tenant's first, SPEC §20). */
  readonly orColumn?: string;
  /**
   * How the row holds it, when not as the API writes it: `timestamp` is a Date (or PostgreSQL's
   * text, in lists) for an ISO 8601 text; `money` is numeric's text for a number; `object` is a
   * jsonb object, which a row written before the column existed (an old event's) lacks.
   */
  readonly storage?: 'timestamp' | 'money' | 'object';
}

export type FieldTable = Readonly<Record<string, FieldSpec>>;

type WritableKey<F extends FieldTable> = { [K in keyof F]: F[K] extends { write: TSchema } ? K : never }[keyof F];
type RequiredKey<F extends FieldTable> = {
  [K in keyof F]: F[K] extends { write: TSchema; required: true } ? K : never;
}[keyof F];
type WriteStatic<F extends FieldTable, K extends keyof F> = F[K] extends { write: infer W extends TSchema }
  ? Static<W>
  : never;

/** The full object, as the response schema describes it. */
export type RecordObject<F extends FieldTable> = { -readonly [K in keyof F]: Static<F[K]['read']> };
/** The writable fields of a body, in API types. */
export type WritableValues<F extends FieldTable> = { [K in WritableKey<F>]: WriteStatic<F, K> };
/** A validated create body: the required fields, any other writable field, read-only ones ignored. */
export type CreateInput<F extends FieldTable> = { [K in RequiredKey<F>]: WriteStatic<F, K> } & {
  [K in Exclude<WritableKey<F>, RequiredKey<F>>]?: WriteStatic<F, K>;
};
export type UpdateInput<F extends FieldTable> = Partial<WritableValues<F>>;

/** A list item read as PostgreSQL's text of each column, under the column's snake_case name. */
interface ListColumn {
  readonly key: string;
  readonly rowKey: string;
  readonly storage: FieldSpec['storage'];
}

/**
 * Everything derived from a resource's field table. `listKeys` names the fields of a list item,
 * in order (leads list nine of them; customers list the full object).
 */
export function recordFields<const F extends FieldTable, const L extends readonly (keyof F & string)[]>(
  fields: F,
  listKeys: L,
) {
  const entries = Object.entries(fields) as [keyof F & string, FieldSpec][];
  const writable = entries.filter(([, spec]) => spec.write !== undefined);
  const columnOf = (key: string) => fields[key]?.column ?? key;
  // A body lists the fields a create requires first, then the others; an update makes them all optional.
  const required = writable.filter(([, spec]) => spec.required);
  const bodyOrder = [...required, ...writable.filter((entry) => !required.includes(entry))];
  const writableKeys = bodyOrder.map(([key]) => key) as WritableKey<F>[];
  const body = (allOptional: boolean) => {
    // Read-only fields a client may send back as it read them: `_id` and `id` of every resource, then the rest.
    const readOnly = [
      '_id',
      'id',
      ...entries.filter(([key, spec]) => !spec.write && key !== '_id' && key !== 'id').map(([key]) => key),
    ];
    return {
      ...Object.fromEntries(
        bodyOrder.map(([key, spec]) => {
          const schema = spec.write as TSchema;
          return [key, spec.required && !allOptional ? schema : Type.Optional(schema)];
        }),
      ),
      ...Object.fromEntries(readOnly.map((key) => [key, IgnoredOnWrite])),
    };
  };
  const objectProperties = Object.fromEntries(entries.map(([key, spec]) => [key, spec.read]));
  const listProperties = Object.fromEntries(listKeys.map((key) => [key, fields[key]?.read as TSchema]));

  const listColumns: ListColumn[] = listKeys.map((key) => {
    const column = columnOf(key);
    const storage = fields[key]?.storage;
    return { key, storage, rowKey: sqlNameOf(storage === 'timestamp' ? `${column}Text` : column) };
  });
  const defaults = Object.fromEntries(
    writable.filter(([, spec]) => 'default' in spec).map(([key, spec]) => [key, spec.default]),
  ) as Partial<WritableValues<F>>;
  const rowColumns = [...new Set(['id', 'tenantId', ...entries.map(([key]) => columnOf(key))]), 'version'];
  // The first field of each column (`_id` before a customer's `id`): what a stored column shows as.
  const fieldByColumn = new Map<string, { field: string; fromStored(value: unknown, row: StoredRow): unknown }>();
  for (const [key, spec] of [...entries].reverse()) {
    const convert = converterOf(spec.storage) ?? shownAsStored;
    const { orColumn } = spec;
    const fromStored = orColumn ? (value: unknown, row: StoredRow) => convert(value ?? row[orColumn]) : convert;
    fieldByColumn.set(columnOf(key), { field: key, fromStored });
  }

  return {
    schemas: {
      object: Type.Object(objectProperties, { additionalProperties: false }) as unknown as TObject<{
        [K in keyof F]: F[K]['read'];
      }>,
      listItem: Type.Object(listProperties, { additionalProperties: false }) as unknown as TObject<{
        [K in L[number]]: F[K]['read'];
      }>,
      /** Body properties of a create and of an update; each resource adds its own options (description). */
      createProperties: body(false),
      updateProperties: body(true),
    },
    writableKeys,
    /** The fields a create must carry. */
    requiredKeys: required.map(([key]) => key),
    /** The columns of the writable fields, in the order of `writableKeys` (an insert's columns). */
    writableColumns: writableKeys.map((key) => columnOf(key as string)),
    defaults,
    /** A writable field's body schema (a status route takes exactly `{status}`). */
    writeSchemaOf: <K extends WritableKey<F>>(key: K) => fields[key]?.write as F[K]['write'] & TSchema,
    /** The columns a single read or a write returns: the key, every field's column, and the version (the ETag). */
    rowColumns,
    /** The columns of a list query: timestamps as PostgreSQL's text, each under a name of its own. */
    listSelection: [...new Map(listColumns.map((listed) => [listed.rowKey, listed])).values()].map(
      ({ key, storage }) => {
        const column = columnOf(key);
        return storage === 'timestamp' ? timestampText(column).as(`${column}Text`) : column;
      },
    ),

    /** The fields of a validated body that change the record: "" means no value (SPEC §3); read-only ones are dropped. */
    writableOf(input: Readonly<Record<string, unknown>>): Partial<WritableValues<F>> {
      return pickWritable(input, writableKeys as string[]) as Partial<WritableValues<F>>;
    },

    /** API values as the row stores them (the store's insert and update take these). */
    toColumns(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
      const columns: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(values)) {
        columns[columnOf(key)] =
          fields[key]?.storage === 'timestamp' && typeof value === 'string' ? new Date(value) : value;
      }
      return columns;
    },

    /** A row of a single read or a write as the full object. */
    toObject: compileRowMapper<RecordObject<F>>(
      entries.map(([key, spec]) => ({
        key,
        rowKey: columnOf(key),
        orRowKey: spec.orColumn,
        convert: converterOf(spec.storage),
      })),
    ) as (row: StoredRow) => RecordObject<F>,

    /** The field a stored column shows as (`id` → `_id`), and how its value is shown (events' `previous`, of `row`). */
    fieldOf(column: string): { field: string; fromStored(value: unknown, row: StoredRow): unknown } | undefined {
      return fieldByColumn.get(column);
    },

    /** A list row (read without the camel-case plugin, so under snake_case names) as a list item. */
    toListItem: compileRowMapper<{ [K in L[number]]: Static<F[K]['read']> }>(
      listColumns.map(({ key, rowKey, storage }) => ({ key, rowKey, convert: converterOf(storage) })),
    ),
  };
}

/** How a stored value of each storage is shown (FieldSpec.storage). */
const CONVERTERS: Readonly<Record<NonNullable<FieldSpec['storage']>, (value: unknown) => unknown>> = {
  timestamp: (value) => toIso(value as Date | string | null),
  money: Number,
  object: (value) => value ?? {},
};

const shownAsStored = (value: unknown) => value;

/** How a stored value of `storage` is shown; none when it is shown as stored. */
function converterOf(storage: FieldSpec['storage']): ((value: unknown) => unknown) | undefined {
  return storage === undefined ? undefined : CONVERTERS[storage];
}
