import type { EventFilter, FieldTest, FilterCondition, FilterScalar } from './event-filter.schemas.js';

/** What a filter looks at of an event: as the feed shows it (EventService.render). */
export interface FilteredEvent {
  readonly type: string;
  readonly data: { readonly object: Readonly<Record<string, unknown>>; readonly changedFields: readonly string[] };
}

/** A filter made ready to run (compileFilter): closures over its parts, nothing read again per event. */
export interface CompiledFilter {
  /** The event types it names, when it names some. */
  readonly types: readonly string[] | undefined;
  /** The token ids whose events it drops, "self" being `self` (the subscription's owner, or the feed's reader). */
  excludedTokens(self: string | null): string[];
  /** Whether an event of `type` made by `tokenId` may pass: what is known before the event is rendered. */
  admits(type: string, tokenId: string | null, self: string | null): boolean;
  /** Whether a rendered event passes `changedFields` and `where`. */
  matches(event: FilteredEvent): boolean;
}

type Test = (object: Readonly<Record<string, unknown>>) => boolean;
type Read = (object: Readonly<Record<string, unknown>>) => unknown;

const SELF = 'self';
/** A timestamp with its zone, as an operand of `gte`/`lte`: compared as the API writes them (`toISOString`). */
const ZONED_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i;

/**
 * Turns a filter (valid by its schema and checkFilter) into closures, once: the tree of `where` becomes
 * a tree of functions, so that an event costs property reads and comparisons, never a walk of the
 * filter's JSON. User input never becomes code (no `new Function`).
 */
export function compileFilter(filter: EventFilter): CompiledFilter {
  const types = filter.types ? new Set(filter.types) : undefined;
  const actors = (filter.excludeActors ?? []).map((actor) => (actor === SELF ? actor : actor.toLowerCase()));
  const excluded = new Set(actors.filter((actor) => actor !== SELF));
  const excludesSelf = actors.includes(SELF);
  const changed = filter.changedFields ? changedTest(filter.changedFields) : undefined;
  const where = filter.where ? conditionTest(filter.where) : undefined;
  return {
    types: filter.types ? [...filter.types] : undefined,
    excludedTokens: (self) => [...excluded, ...(excludesSelf && self ? [self] : [])],
    admits(type, tokenId, self) {
      if (types && !types.has(type)) return false;
      if (tokenId === null) return true;
      return !excluded.has(tokenId) && !(excludesSelf && tokenId === self);
    },
    matches(event) {
      if (changed && !changed(event)) return false;
      return where ? where(event.data.object) : true;
    },
  };
}

/**
 * An update passes when it changed a watched field; a creation or a deletion changes none, and
 * passes, and so does a job's end (`import.finished`, `export.finished`: SPEC §23), which is no
 * change of fields either.
 */
function changedTest(fields: readonly string[]): (event: FilteredEvent) => boolean {
  const watched = new Set(fields);
  return (event) =>
    event.type.endsWith('.created') ||
    event.type.endsWith('.deleted') ||
    event.type.endsWith('.finished') ||
    event.data.changedFields.some((field) => watched.has(field));
}

function conditionTest(condition: FilterCondition): Test {
  const [key, value] = Object.entries(condition)[0] ?? [];
  if (key === 'all') {
    const parts = (value as FilterCondition[]).map(conditionTest);
    return (object) => parts.every((part) => part(object));
  }
  if (key === 'any') {
    const parts = (value as FilterCondition[]).map(conditionTest);
    return (object) => parts.some((part) => part(object));
  }
  if (key === 'not') {
    const inner = conditionTest(value as FilterCondition);
    return (object) => !inner(object);
  }
  if (key === undefined) throw new Error('an empty condition passed the schema');
  return fieldTest(readerOf(key), value as FieldTest);
}

/** How a field is read off an object: its own property (never the prototype's), or a key of `custom`. */
function readerOf(field: string): Read {
  if (field.startsWith('custom.')) {
    const key = field.slice('custom.'.length);
    return (object) => {
      const custom = Object.hasOwn(object, 'custom') ? object.custom : undefined;
      return custom !== null && typeof custom === 'object' && Object.hasOwn(custom, key)
        ? (custom as Record<string, unknown>)[key]
        : undefined;
    };
  }
  return (object) => (Object.hasOwn(object, field) ? object[field] : undefined);
}

const present = (value: unknown) => value !== undefined && value !== null;

/** One field's test; a missing (or null) value fails every test but `exists: false`. */
function fieldTest(read: Read, test: FieldTest): Test {
  const [operator, operand] = Object.entries(test)[0] ?? [];
  switch (operator) {
    case 'exists':
      return operand ? (object) => present(read(object)) : (object) => !present(read(object));
    case 'eq':
      return (object) => {
        const value = read(object);
        return Array.isArray(value) ? value.includes(operand) : value === operand;
      };
    case 'neq':
      return (object) => {
        const value = read(object);
        if (!present(value)) return false;
        return Array.isArray(value) ? !value.includes(operand) : value !== operand;
      };
    case 'in': {
      const values = new Set<unknown>(operand as FilterScalar[]);
      return (object) => {
        const value = read(object);
        return Array.isArray(value) ? value.some((item) => values.has(item)) : values.has(value);
      };
    }
    case 'gte':
      return ordered(read, operand as string | number, (value, bound) => value >= bound);
    case 'lte':
      return ordered(read, operand as string | number, (value, bound) => value <= bound);
    default:
      throw new Error(`an unknown operator passed the schema: ${operator}`);
  }
}

/** A comparison of a value with a bound of its own type: numbers by value, text in text order. */
function ordered(
  read: Read,
  bound: string | number,
  compare: <T extends string | number>(value: T, bound: T) => boolean,
): Test {
  const limit = typeof bound === 'string' && ZONED_TIMESTAMP.test(bound) ? asApiTimestamp(bound) : bound;
  return (object) => {
    const value = read(object);
    return typeof value === typeof limit && compare(value as typeof limit, limit);
  };
}

/** The API's own form of a timestamp (`2026-11-21T10:00:00.000Z`), so that text order is time order. */
function asApiTimestamp(text: string): string {
  const time = Date.parse(text);
  return Number.isNaN(time) ? text : new Date(time).toISOString();
}

/**
 * Compiled filters by their JSON, the least recently used dropped past `size`: the subscriptions
 * of a tenant, and readers of the feed that send the same filter, compile it once. A stored
 * filter comes back from its jsonb column with its keys in jsonb's own order, so one filter has
 * one key however it was written; the text is the key as it is (sorting keys again would cost
 * more than compiling a small filter).
 */
export class FilterCache {
  readonly #compiled = new Map<string, CompiledFilter>();

  constructor(private readonly size = 1_000) {}

  compile(filter: EventFilter): CompiledFilter {
    const key = JSON.stringify(filter);
    const found = this.#compiled.get(key);
    if (found) {
      // Last in Map order: the most recently used.
      this.#compiled.delete(key);
      this.#compiled.set(key, found);
      return found;
    }
    const compiled = compileFilter(filter);
    this.#compiled.set(key, compiled);
    if (this.#compiled.size > this.size) this.#compiled.delete(this.#compiled.keys().next().value as string);
    return compiled;
  }

  get cached(): number {
    return this.#compiled.size;
  }
}
