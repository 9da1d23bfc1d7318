import type { TSchema } from 'typebox';
import type { CustomFieldSet } from '../fields/custom-field-set.js';
import { CUSTOM_KEY_PATTERN, type CustomFieldType } from '../fields/custom-field-types.js';
import type { Text } from '../shared/messages.js';
import { importMessages } from './import.messages.js';

/** How a cell's text becomes a JSON value: as text, a number, a yes/no, or a list (`a|b`). */
type CellKind = 'text' | 'number' | 'boolean' | 'list';

interface Column {
  readonly name: string;
  readonly custom: boolean;
  readonly kind: CellKind;
}

const CUSTOM_PREFIX = 'custom.';
const customKey = new RegExp(CUSTOM_PREFIX.replace('.', '\\.') + CUSTOM_KEY_PATTERN.slice(1));

const TRUE = new Set(['true', '1', 'sim', 's', 'yes', 'y', 'verdadeiro']);
const FALSE = new Set(['false', '0', 'não', 'nao', 'n', 'no', 'falso']);

/**
 * The columns a CSV header may name for a resource: its create body's fields (SPEC §3, §4) but
 * `custom`, whose values come one per column as `custom.<key>` (SPEC §16).
 */
export function columnKinds(createSchema: TSchema): ReadonlyMap<string, CellKind> {
  const properties = (createSchema as { properties: Record<string, TSchema> }).properties;
  const kinds = new Map<string, CellKind>();
  for (const [name, schema] of Object.entries(properties)) {
    if (name !== 'custom') kinds.set(name, kindOf(jsonTypeOf(schema)));
  }
  return kinds;
}

/** The fault of a header, or undefined: a column that is no field, a column named twice, the upsert key missing. */
export function headerFault(
  columns: readonly string[],
  kinds: ReadonlyMap<string, CellKind>,
  custom: CustomFieldSet,
  upsert: string | undefined,
): Text | undefined {
  const seen = new Set<string>();
  for (const column of columns) {
    if (seen.has(column)) return importMessages.repeatedColumn(column);
    seen.add(column);
    const known = kinds.has(column) || (customKey.test(column) && custom.has(column.slice(CUSTOM_PREFIX.length)));
    if (!known) return importMessages.unknownColumn(column);
  }
  if (upsert !== undefined && !seen.has(upsert)) return importMessages.upsertColumnMissing(upsert);
  return undefined;
}

/**
 * One CSV row as the body of a create (or upsert): an empty cell is no value; numbers, yes/no and
 * lists read from text. In a file separated by `;` (a Brazilian spreadsheet's), numbers are
 * written `1.234,56`; in one separated by `,`, `1234.56`. Text that is no number where one is
 * wanted is kept as text, for the create's own check to refuse with its usual message. What an
 * export wrote reads back as it was: a formula guard `'` dropped, a list as its JSON array.
 */
export class CsvRowReader {
  readonly #columns: readonly Column[];

  constructor(
    columns: readonly string[],
    kinds: ReadonlyMap<string, CellKind>,
    custom: CustomFieldSet,
    private readonly decimalComma: boolean,
  ) {
    this.#columns = columns.map((column) => {
      if (!column.startsWith(CUSTOM_PREFIX)) return { name: column, custom: false, kind: kinds.get(column) ?? 'text' };
      const key = column.slice(CUSTOM_PREFIX.length);
      return { name: key, custom: true, kind: kindOfCustom(custom.typeOf(key)) };
    });
  }

  /** The body, or the row's fault: its count of cells is not the header's. */
  read(cells: readonly string[]): Record<string, unknown> | Text {
    if (cells.length !== this.#columns.length) return importMessages.cellCount(cells.length, this.#columns.length);
    const body: Record<string, unknown> = {};
    let custom: Record<string, unknown> | undefined;
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i] as string;
      if (cell.trim() === '') continue;
      const column = this.#columns[i] as Column;
      const value = this.#valueOf(cell, column.kind);
      if (column.custom) {
        custom ??= Object.create(null) as Record<string, unknown>;
        custom[column.name] = value;
      } else {
        body[column.name] = value;
      }
    }
    if (custom) body.custom = { ...custom };
    return body;
  }

  #valueOf(cell: string, kind: CellKind): unknown {
    switch (kind) {
      case 'number':
        return numberOf(cell.trim(), this.decimalComma) ?? cell;
      case 'boolean': {
        const word = cell.trim().toLowerCase();
        return TRUE.has(word) ? true : FALSE.has(word) ? false : cell;
      }
      case 'list':
        return listOf(cell);
      default:
        return unescaped(cell);
    }
  }
}

/**
 * A text cell as exported (SPEC §23): a leading `'` that guards a formula character against
 * spreadsheets (`'=1+1`, `'+55 11…`) is not part of the value.
 */
function unescaped(cell: string): string {
  return cell.length > 1 && cell[0] === "'" && FORMULA_START.has(cell[1] as string) ? cell.slice(1) : cell;
}

const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);

/** A list cell: `a|b`, or a JSON array of texts as an export writes it (`["a","b"]`). */
function listOf(cell: string): unknown {
  const text = cell.trim();
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // Not JSON: read as `a|b`.
    }
  }
  return text
    .split('|')
    .map((item) => unescaped(item.trim()))
    .filter((item) => item !== '');
}

const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const COMMA_NUMBER = /^[+-]?\d{1,3}(\.\d{3})*(,\d+)?$|^[+-]?\d+(,\d+)?$/;

function numberOf(text: string, decimalComma: boolean): number | undefined {
  if (decimalComma && COMMA_NUMBER.test(text)) return Number(text.replaceAll('.', '').replace(',', '.'));
  return PLAIN_NUMBER.test(text) ? Number(text) : undefined;
}

function jsonTypeOf(schema: TSchema): string | undefined {
  const { type, anyOf } = schema as { type?: unknown; anyOf?: TSchema[] };
  if (typeof type === 'string') return type;
  return anyOf?.map(jsonTypeOf).find((each) => each !== undefined && each !== 'null');
}

function kindOf(type: string | undefined): CellKind {
  if (type === 'integer' || type === 'number') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'array') return 'list';
  return 'text';
}

function kindOfCustom(type: CustomFieldType | undefined): CellKind {
  if (type === 'number' || type === 'integer') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'multiselect') return 'list';
  return 'text';
}
