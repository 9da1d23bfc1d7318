import type { ValidateFunction } from 'ajv';
import type { TSchema } from 'typebox';
import type { CustomFieldSet } from '../fields/custom-field-set.js';
import { type ApiError, validationFailed } from '../shared/errors.js';
import { MAX_JSON_DEPTH } from '../shared/json-limits.js';
import type { Text } from '../shared/messages.js';
import { buildValidatorCompiler, schemaError } from '../shared/validation.js';
import { importMessages } from './import.messages.js';
import type { ImportRow, RowFault } from './import.repository.js';
import { CsvRowReader, columnKinds } from './import-cells.js';
import type { StoredRow } from './import-reader.js';

/** A row erased at its person's request before its chunk ran (SPEC §17). */
export const ERASED_ROW = 'erased';

const LINE_FAULTS: Readonly<Record<string, Text>> = {
  json: importMessages.notJson,
  object: importMessages.notAnObject,
  key: importMessages.forbiddenKey,
  deep: importMessages.nestedTooDeep(MAX_JSON_DEPTH),
  surrogate: importMessages.invalidUnicode,
  [ERASED_ROW]: importMessages.erased,
};

/**
 * The stored rows of a resource's imports as the create bodies (or upsert bodies) `POST /<resource>`
 * would take, each checked by the create schema as the route checks it: the same 400s, row by row.
 */
export class ImportRowReader {
  readonly #validate: ValidateFunction;
  readonly #kinds: ReturnType<typeof columnKinds>;

  constructor(
    create: TSchema,
    private readonly requiredText: Text | undefined,
  ) {
    const compile = buildValidatorCompiler();
    this.#validate = compile({ schema: create, method: 'POST', url: '', httpPart: 'body' }) as ValidateFunction;
    this.#kinds = columnKinds(create);
  }

  get columnKinds(): ReturnType<typeof columnKinds> {
    return this.#kinds;
  }

  /** Each row's body, or its 400. */
  inputs(
    job: Pick<ImportRow, 'columns' | 'delimiter'>,
    custom: CustomFieldSet,
    rows: readonly StoredRow[],
  ): (object | ApiError)[] {
    const csv = job.columns ? new CsvRowReader(job.columns, this.#kinds, custom, job.delimiter === ';') : undefined;
    return rows.map((row) => {
      if (typeof row === 'string') return rowFault(LINE_FAULTS[row] ?? importMessages.notJson);
      let body: Record<string, unknown> | Text;
      if (Array.isArray(row)) {
        if (!csv) return rowFault(importMessages.notAnObject);
        body = csv.read(row);
        if (isText(body)) return rowFault(body);
      } else {
        body = row as Record<string, unknown>;
      }
      return this.#validate(body) ? body : schemaError(this.#validate.errors ?? [], 'body', this.requiredText);
    });
  }
}

function isText(value: Record<string, unknown> | Text): value is Text {
  return typeof value.pt === 'string' && typeof value.en === 'string' && Object.keys(value).length === 2;
}

function rowFault(text: Text): ApiError {
  return validationFailed([{ field: 'row', message: text }], text);
}

/** A row's error as the import lists it: one entry per field at fault (or one for the row), with its §2 code. */
export function faultsOf(row: number, error: ApiError): RowFault[] {
  if (error.details && error.details.length > 0) {
    return error.details.map((detail) => ({
      row,
      field: detail.field === 'row' ? null : detail.field,
      code: error.code,
      message: detail.message,
    }));
  }
  return [{ row, field: null, code: error.code, message: error.text }];
}
