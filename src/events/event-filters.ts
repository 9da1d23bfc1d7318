import type { ValidateFunction } from 'ajv';
import secureJson from 'secure-json-parse';
import { type FieldIssue, forbidden, validationFailed } from '../shared/errors.js';
import { fieldMessage, type Text } from '../shared/messages.js';
import { bodyValidator, toFieldIssues } from '../shared/validation.js';
import type { EventObjectKind } from './change-events.js';
import { eventMessages } from './event.messages.js';
import { familiesReadableWith, scopeLackingFor, typesOf } from './event.service.js';
import { type CompiledFilter, FilterCache } from './event-filter.js';
import { filterMessages } from './event-filter.messages.js';
import {
  EVENT_FILTER_ID,
  EVENT_FILTER_SCHEMAS,
  type EventFilter,
  type FilterCondition,
  MAX_FILTER_DEPTH,
  MAX_FILTER_TESTS,
} from './event-filter.schemas.js';

const COMBINATORS = new Set(['all', 'any', 'not']);
/** The kinds of object that carry custom values (SPEC §16). */
const WITH_CUSTOM: ReadonlySet<EventObjectKind> = new Set(['lead', 'customer']);

/**
 * SPEC §22's filters, for the feed and the webhooks alike: what makes one valid beyond its schema
 * (depth, count, fields the events' objects have), reading one from the feed's query string, and
 * the compiled form each is run in, kept once per distinct filter.
 */
export class EventFilters {
  readonly #cache = new FilterCache();
  #validate: ValidateFunction | undefined;

  /** `objectFields`: the API fields of each kind of object an event carries. */
  constructor(private readonly objectFields: Readonly<Record<EventObjectKind, readonly string[]>>) {}

  compile(filter: EventFilter): CompiledFilter {
    return this.#cache.compile(filter);
  }

  /**
   * The filter of the feed's query string: URL-decoded JSON, checked against its schema. Asking
   * for types of a family the token may not read is a 403 (as `types=` is), before any 400 of the rest.
   */
  parse(text: string, scopes: ReadonlySet<string>): EventFilter {
    let value: unknown;
    try {
      value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      throw validationFailed([{ field: 'filter', message: fieldMessage('filter', filterMessages.notJson()) }]);
    }
    checkFilterTypes(scopes, (value as { types?: unknown } | null)?.types);
    this.#validate ??= compileFilterSchema();
    if (!this.#validate(value)) {
      const errors = (this.#validate.errors ?? []).map((error) => ({
        ...error,
        instancePath: `/filter${error.instancePath}`,
      }));
      throw validationFailed(toFieldIssues(errors, 'filter'));
    }
    return value as EventFilter;
  }

  /**
   * A 400 naming the part at fault of a filter its schema admitted: `all`/`any`/`not` nested too
   * deep, too many tests, or a field that no object of the events it may see has (`types`: those
   * events' types, narrowed by the filter's own).
   */
  check(filter: EventFilter, types: readonly string[], path = 'filter'): void {
    const fields = this.#fieldsOf(types, filter.types);
    const issues: FieldIssue[] = [];
    filter.changedFields?.forEach((field, index) => {
      const issue = fields.problem(field);
      if (issue) issues.push(issueAt(`${path}.changedFields.${index}`, issue));
    });
    if (filter.where) {
      const tests = { count: 0 };
      walk(
        filter.where,
        `${path}.where`,
        0,
        (field, at) => {
          tests.count++;
          const issue = fields.problem(field);
          if (issue) issues.push(issueAt(at, issue));
        },
        issues,
      );
      if (tests.count > MAX_FILTER_TESTS) {
        issues.push(issueAt(`${path}.where`, filterMessages.tooManyTests(MAX_FILTER_TESTS, tests.count)));
      }
    }
    if (issues.length > 0) throw validationFailed(issues);
  }

  /** The fields a filter may name, for events of `types` (those of `own` among them, when it names some). */
  #fieldsOf(types: readonly string[], own: readonly string[] | undefined) {
    const narrowed = own ? types.filter((type) => own.includes(type)) : types;
    const kinds = [...new Set((narrowed.length > 0 ? narrowed : types).map(kindOf))];
    const known = new Set(kinds.flatMap((kind) => this.objectFields[kind] ?? []));
    const custom = kinds.some((kind) => WITH_CUSTOM.has(kind));
    return {
      problem(field: string) {
        if (field.startsWith('custom.')) return custom ? undefined : filterMessages.notAField(kinds);
        if (field === 'custom') return filterMessages.wholeCustom();
        return known.has(field) ? undefined : filterMessages.notAField(kinds);
      },
    };
  }
}

/** Each test of a condition (`onTest`), and an issue for each combinator nested past MAX_FILTER_DEPTH. */
function walk(
  condition: FilterCondition,
  path: string,
  depth: number,
  onTest: (field: string, path: string) => void,
  issues: FieldIssue[],
): void {
  const [key, value] = Object.entries(condition)[0] ?? [];
  if (key === undefined) return;
  if (!COMBINATORS.has(key)) {
    onTest(key, `${path}.${key}`);
  } else if (depth === MAX_FILTER_DEPTH) {
    issues.push(issueAt(`${path}.${key}`, filterMessages.tooDeep(MAX_FILTER_DEPTH)));
  } else if (key === 'not') {
    walk(value as FilterCondition, `${path}.not`, depth + 1, onTest, issues);
  } else {
    (value as FilterCondition[]).forEach((inner, index) => {
      walk(inner, `${path}.${key}.${index}`, depth + 1, onTest, issues);
    });
  }
}

/**
 * A 403 when a filter's `types` names a type of a family the token may not read (SPEC §14's
 * scopes): read before the filter is validated, since SPEC §2 puts the 403 first.
 */
export function checkFilterTypes(scopes: ReadonlySet<string>, types: unknown): void {
  if (!Array.isArray(types)) return;
  for (const type of types) {
    if (typeof type !== 'string') continue;
    const lacking = scopeLackingFor(scopes, type);
    if (lacking !== undefined) throw forbidden(eventMessages.typeNotAllowed(type, lacking));
  }
}

/** Every event type of the families a token with `scopes` may read. */
export function typesReadableWith(scopes: ReadonlySet<string>): string[] {
  return typesOf(familiesReadableWith(scopes));
}

function compileFilterSchema(): ValidateFunction {
  const ajv = bodyValidator();
  for (const schema of EVENT_FILTER_SCHEMAS) ajv.addSchema(schema);
  return ajv.getSchema(EVENT_FILTER_ID) as ValidateFunction;
}

function issueAt(field: string, phrase: Text): FieldIssue {
  return { field, message: fieldMessage(field, phrase) };
}

function kindOf(type: string): EventObjectKind {
  return type.slice(0, type.indexOf('.')) as EventObjectKind;
}
