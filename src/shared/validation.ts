import type { ErrorObject, Options } from 'ajv';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import addKeywords from 'ajv-keywords';
import type { FastifySchemaCompiler } from 'fastify';
import { type ApiError, type FieldIssue, validationFailed } from './errors.js';
import { isUuid } from './ids.js';
import { fieldMessage, fieldMessages, type Text } from './messages.js';

const EMAIL = /^[^\s@"<>()[\]\\,;:]+@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

const rfc3339 = fullFormats['date-time'] as { validate: (value: string) => boolean };

function isDateTime(value: string): boolean {
  return rfc3339.validate(value) && !Number.isNaN(Date.parse(value));
}

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({
    removeAdditional: false,
    useDefaults: false,
    allErrors: false,
    strictSchema: false,
    // `custom` takes arrays of mixed items (`type: [...]`) on purpose; else Ajv writes a warning to stderr for each.
    allowUnionTypes: true,
    multipleOfPrecision: 9,
    ...options,
  });
  addFormats.default(ajv, ['date', 'date-time', 'uuid', 'uri']);
  // `transform` trims and lower-cases strings before the other keywords see them (SPEC §3: "trimmed").
  addKeywords.default(ajv, ['transform']);
  // "" is how web forms say "no value" (SPEC §3), so an optional e-mail may be empty; required ones set minLength.
  ajv.addFormat('email', { type: 'string', validate: (value: string) => value === '' || EMAIL.test(value) });
  // ajv-formats' uuid admits a `urn:uuid:` prefix, which PostgreSQL's uuid type does not: the path ids' rule instead.
  ajv.addFormat('uuid', { type: 'string', validate: isUuid });
  // RFC 3339 allows values a Date cannot hold (a leap second, 23:59:60): those are refused here, not stored as NaN.
  ajv.addFormat('date-time', { type: 'string', validate: (value: string) => isDateTime(value) });
  return ajv;
}

/** The Ajv of bodies: types are strict (no coercion), strings trimmed where the schema says. */
export function bodyValidator(): Ajv {
  return createAjv({ coerceTypes: false });
}

const NONE_SHARED: readonly object[] = [];
/** One compiler per set of shared schemas for the process: every app built in it (tests build many) shares its Ajvs. */
const compilers = new Map<readonly object[], FastifySchemaCompiler<unknown>>();

/**
 * Bodies are strict (no coercion: `"score": "10"` is a 400); query strings and params arrive
 * as text, so there numbers are coerced from their text. `shared`: schemas with an `$id` that
 * routes name by `$ref` (the app adds them too, for its serialisers and its documents). A schema
 * is compiled once for the process, found again by its JSON: routes build their schema objects
 * afresh for each app.
 */
export function buildValidatorCompiler(shared: readonly object[] = NONE_SHARED): FastifySchemaCompiler<unknown> {
  const known = compilers.get(shared);
  if (known) return known;
  const bodyAjv = bodyValidator();
  const textAjv = createAjv({ coerceTypes: true });
  for (const schema of shared) {
    bodyAjv.addSchema(schema);
    textAjv.addSchema(schema);
  }
  const compiled = new Map<string, ReturnType<FastifySchemaCompiler<unknown>>>();
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    const body = httpPart === 'body';
    const key = `${body ? 'body' : 'text'}:${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = (body ? bodyAjv : textAjv).compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
      compiled.set(key, validate);
    }
    return validate;
  };
  compilers.set(shared, compiler);
  return compiler;
}

/** Turns Ajv's errors into SPEC §2 `details`, one issue per field, the most telling error first. */
export function toFieldIssues(errors: readonly Partial<ErrorObject>[], part: string | undefined): FieldIssue[] {
  const byField = new Map<string, Partial<ErrorObject>[]>();
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const field = fieldOf(error, part);
    const list = byField.get(field) ?? [];
    list.push(error);
    byField.set(field, list);
  }
  return [...byField].map(([field, fieldErrors]) => ({
    field,
    message: fieldMessage(field, phraseFor(pickMostTelling(fieldErrors))),
  }));
}

/** The phrase of one value's errors (a custom field's, checked apart from its body), as a field's would read. */
export function phraseOfErrors(errors: readonly Partial<ErrorObject>[]): Text {
  return phraseFor(pickMostTelling([...errors]));
}

function fieldOf(error: Partial<ErrorObject>, part: string | undefined): string {
  const params = error.params ?? {};
  const path = (error.instancePath ?? '')
    .split('/')
    .filter(Boolean)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (error.keyword === 'required') path.push(String(params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(params.additionalProperty));
  return path.join('.') || (part === 'body' ? 'body' : String(part ?? 'request'));
}

/** A nullable field that fails yields a `type` error from its null branch; the string branch's error says more. */
function pickMostTelling(errors: Partial<ErrorObject>[]): Partial<ErrorObject> {
  const specific = errors.find((e) => e.keyword !== 'type');
  if (specific) return specific;
  const types = errors.flatMap((e) => [e.params?.type].flat()).filter(Boolean);
  return { keyword: 'type', params: { type: [...new Set(types)].join(',') } };
}

function phraseFor(error: Partial<ErrorObject>): Text {
  const params = (error.params ?? {}) as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return fieldMessages.required();
    case 'additionalProperties':
      return fieldMessages.unknown();
    case 'type':
      return fieldMessages.type(String(params.type));
    case 'minLength':
      return params.limit === 1 ? fieldMessages.empty() : fieldMessages.invalid();
    case 'maxLength':
      return fieldMessages.maxLength(Number(params.limit));
    case 'format':
      return params.format === 'email'
        ? fieldMessages.email()
        : params.format === 'date-time'
          ? fieldMessages.dateTime()
          : params.format === 'date'
            ? fieldMessages.date()
            : fieldMessages.invalid();
    case 'enum':
      return fieldMessages.oneOf(params.allowedValues as unknown[]);
    case 'const':
      return fieldMessages.oneOf([params.allowedValue]);
    case 'minimum':
      return fieldMessages.minimum(Number(params.limit));
    case 'maximum':
      return fieldMessages.maximum(Number(params.limit));
    case 'multipleOf':
      return fieldMessages.decimals();
    case 'minItems':
      return fieldMessages.minItems(Number(params.limit));
    case 'maxItems':
      return fieldMessages.maxItems(Number(params.limit));
    case 'minProperties':
      return fieldMessages.atLeastOneField();
    case 'uniqueItems':
      return fieldMessages.uniqueItems();
    default:
      return fieldMessages.invalid();
  }
}

/** The 400 of a body or parameter the schema refused; `requiredText` names a missing required field's rule. */
export function schemaError(
  errors: readonly Partial<ErrorObject>[],
  part: string | undefined,
  requiredText: Text | undefined,
): ApiError {
  const first = errors[0];
  const missingRequired =
    first?.keyword === 'required' || (first?.keyword === 'minLength' && first.params?.limit === 1);
  return validationFailed(toFieldIssues(errors, part), requiredText && missingRequired ? requiredText : undefined);
}
