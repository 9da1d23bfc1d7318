import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { CsvError, parse } from 'csv-parse';
import secureJson from 'secure-json-parse';
import { ApiError, validationFailed } from '../shared/errors.js';
import { hasLoneSurrogate, nestedTooDeep } from '../shared/json-limits.js';
import type { Text } from '../shared/messages.js';
import { importMessages } from './import.messages.js';
import { IMPORT_LIMITS } from './import.schemas.js';

/**
 * A row as an import keeps it until its chunk runs: a CSV row's cells (checked against the header
 * then), an NDJSON line's object, or why a line could not be read (`json`, `object`, `key`, `deep`, `surrogate`), or `erased`
 * (SPEC §17).
 */
export type StoredRow = readonly string[] | Record<string, unknown> | LineFault;
export type LineFault = 'json' | 'object' | 'key' | 'deep' | 'surrogate' | 'erased';

/** A file being read: its header (CSV), and its rows, read as they are asked for. */
export interface ImportFile {
  readonly columns: readonly string[] | undefined;
  readonly rows: AsyncIterable<StoredRow>;
}

const NEWLINE = 0x0a;
const SEMICOLON = ';';

/** What was sent, a chunk at a time, refused past SPEC §23's 100 MiB with a 413. */
export async function* withinLimit(
  source: AsyncIterable<Buffer>,
  maxBytes = IMPORT_LIMITS.bytes,
): AsyncGenerator<Buffer> {
  let bytes = 0;
  for await (const chunk of source) {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      throw new ApiError({
        statusCode: 413,
        code: 'payload_too_large',
        text: importMessages.fileTooLarge(maxBytes / 1024 / 1024),
      });
    }
    yield chunk;
  }
}

/**
 * A CSV file as Brazilian spreadsheets write it (SPEC §23): UTF-8 with or without a BOM, cells
 * separated by `,` or `;` (the one the header line has more of, outside quotes), RFC 4180 quotes,
 * CRLF or LF. Read by csv-parse, one row at a time; a file it cannot read (a quote never closed)
 * is a 400 naming the data row, in both languages.
 */
export async function openCsv(source: AsyncIterable<Buffer>): Promise<ImportFile & { delimiter: string }> {
  const iterator = source[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  while (head.indexOf(NEWLINE) < 0 && head.length <= IMPORT_LIMITS.rowBytes) {
    const next = await iterator.next();
    if (next.done) break;
    head = Buffer.concat([head, next.value]);
  }
  const firstLine = head.subarray(0, head.indexOf(NEWLINE) < 0 ? head.length : head.indexOf(NEWLINE)).toString('utf8');
  const delimiter = delimiterOf(firstLine);
  const parser = parse({
    bom: true,
    delimiter,
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: IMPORT_LIMITS.rowBytes,
  });
  const rest: AsyncIterable<Buffer> = {
    [Symbol.asyncIterator]: () => iterator,
  };
  Readable.from(
    (async function* () {
      yield head;
      yield* rest;
    })(),
  )
    .on('error', (error) => parser.destroy(error))
    .pipe(parser);
  const records = parser[Symbol.asyncIterator]() as AsyncIterator<string[]>;
  const header = await nextRecord(records);
  if (header === undefined || header.every((cell) => cell.trim() === '')) {
    throw validationFailed([{ field: 'body', message: importMessages.emptyFile }], importMessages.emptyFile);
  }
  return {
    delimiter,
    columns: header.map((cell) => cell.trim()),
    rows: (async function* () {
      for (;;) {
        const record = await nextRecord(records);
        if (record === undefined) return;
        yield record;
      }
    })(),
  };
}

/** The next record, or undefined at the end; a parse failure as a 400 naming the row it is on. */
async function nextRecord(records: AsyncIterator<string[]>): Promise<string[] | undefined> {
  try {
    const next = await records.next();
    return next.done ? undefined : next.value;
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const text = importMessages.malformedCsv(rowOf(error), reasonOf(error));
    throw validationFailed([{ field: 'body', message: text }], text);
  }
}

/**
 * The data row (from 1 after the header, as README's "Import" counts them; 0 the header) a parse
 * failure is on. csv-parse reads ahead of what was taken from it and fails as soon as it meets the
 * fault, so the row is not the one being asked for: it is the record after the `records` it had
 * read whole (the header is the first of them). A quote never closed is found at the end of the
 * file, but no record ends inside quotes, so that count still names the row where it opened.
 * Physical lines (`lines`) are not rows: a quoted cell may hold line breaks, and empty lines are
 * skipped.
 */
function rowOf(error: CsvError): number | undefined {
  const { records } = error;
  return typeof records === 'number' && Number.isInteger(records) && records >= 0 ? records : undefined;
}

/** Why csv-parse refused the file, in both languages (its own messages are English only). */
function reasonOf(error: CsvError): Text {
  switch (error.code) {
    case 'INVALID_OPENING_QUOTE':
      return importMessages.csvQuoteInUnquotedCell;
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return importMessages.csvTextAfterClosingQuote;
    case 'CSV_QUOTE_NOT_CLOSED':
      return importMessages.csvQuoteNotClosed;
    case 'CSV_MAX_RECORD_SIZE':
      return importMessages.csvRowTooLong(IMPORT_LIMITS.rowBytes / 1024 / 1024);
    default:
      return importMessages.csvOther;
  }
}

/** `;` when the header line has more of them than of `,` (outside quotes), else `,`. */
export function delimiterOf(line: string): string {
  let commas = 0;
  let semicolons = 0;
  let quoted = false;
  for (const char of line) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && char === ',') commas++;
    else if (!quoted && char === SEMICOLON) semicolons++;
  }
  return semicolons > commas ? SEMICOLON : ',';
}

/**
 * An NDJSON file: one JSON object per line (blank lines skipped), UTF-8 with or without a BOM.
 * A line that is not an object is that row's fault; a line longer than 1 MiB fails the upload.
 */
export function openNdjson(source: AsyncIterable<Buffer>): ImportFile {
  return { columns: undefined, rows: ndjsonRows(source) };
}

async function* ndjsonRows(source: AsyncIterable<Buffer>): AsyncGenerator<StoredRow> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let first = true;
  let row = 0;
  const lineOf = (line: string): StoredRow | undefined => {
    const text = line.trim();
    if (text === '') return undefined;
    row++;
    return objectOf(text);
  };
  for await (const chunk of source) {
    pending += decoder.write(chunk);
    if (first && pending.length > 0) {
      if (pending.charCodeAt(0) === 0xfeff) pending = pending.slice(1);
      first = false;
    }
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const read = lineOf(pending.slice(0, newline));
      if (read !== undefined) yield read;
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
    if (pending.length > IMPORT_LIMITS.rowBytes) {
      const text = importMessages.rowTooLong(row + 1);
      throw validationFailed([{ field: 'body', message: text }], text);
    }
  }
  const read = lineOf(pending + decoder.end());
  if (read !== undefined) yield read;
}

function objectOf(text: string): StoredRow {
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    return error instanceof SyntaxError && !/prototype/.test(error.message) ? 'json' : 'key';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'object';
  // As a JSON body is checked (request-hooks.ts): a row is stored as JSON, and must be storable.
  if (nestedTooDeep(text)) return 'deep';
  if (hasLoneSurrogate(text, value)) return 'surrogate';
  return value as Record<string, unknown>;
}
