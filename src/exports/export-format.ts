/**
 * How a page of API objects becomes text (SPEC §23). CSV: RFC 4180 (fields quoted when they hold
 * a quote, a comma or a line break; CRLF line ends), UTF-8 without a BOM, a header row of API field
 * names (`custom.<key>` for the tenant's own fields: what an import takes). A cell shows the API's
 * value: null is empty, numbers and booleans as JSON writes them, timestamps in ISO 8601 as the API
 * renders them, a multiselect's values as a JSON array (`["a","b"]`: unambiguous, whatever the
 * options hold). NDJSON: one API object per line, holding only the chosen fields.
 */

/** What a text cell may begin with that a spreadsheet would run as a formula (OWASP: CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** The columns of a file: API field names, `custom.<key>` for one custom value. */
export type Columns = readonly string[];

/**
 * A text value as a CSV cell: a leading formula character is escaped with `'` (OWASP), then the
 * cell is quoted when it must be. Only text is escaped: a number (`-5`) is never a formula.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'string') text = FORMULA_START.test(value) ? `'${value}` : value;
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else text = JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A column's value in an API object: `custom.<key>` reads the object's `custom`. */
function cellValue(object: Readonly<Record<string, unknown>>, column: string): unknown {
  if (column.startsWith('custom.')) {
    const custom = object.custom as Readonly<Record<string, unknown>> | undefined;
    const key = column.slice('custom.'.length);
    return custom && Object.hasOwn(custom, key) ? custom[key] : null;
  }
  return Object.hasOwn(object, column) ? object[column] : null;
}

export function csvHeader(columns: Columns): string {
  return `${columns.map(csvCell).join(',')}\r\n`;
}

export function csvRows(objects: readonly Readonly<Record<string, unknown>>[], columns: Columns): string {
  let text = '';
  for (const object of objects) text += `${columns.map((column) => csvCell(cellValue(object, column))).join(',')}\r\n`;
  return text;
}

/**
 * NDJSON lines: the whole object, or only `fields` (undefined: all), `custom.<key>` kept inside
 * `custom`, so each line is still the API's object, only smaller.
 */
export function ndjsonRows(
  objects: readonly Readonly<Record<string, unknown>>[],
  fields: readonly string[] | undefined,
): string {
  let text = '';
  for (const object of objects) text += `${JSON.stringify(fields ? picked(object, fields) : object)}\n`;
  return text;
}

function picked(object: Readonly<Record<string, unknown>>, fields: readonly string[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.startsWith('custom.')) {
      result.custom ??= {};
      const custom = result.custom as Record<string, unknown>;
      const key = field.slice('custom.'.length);
      const value = cellValue(object, field);
      if (value !== null) custom[key] = value;
    } else {
      result[field] = cellValue(object, field);
    }
  }
  return result;
}
