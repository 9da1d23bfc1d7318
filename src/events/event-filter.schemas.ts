import { type TSchema, Type } from 'typebox';
import { StringEnum } from '../shared/schemas.js';
import { ALL_EVENT_TYPES } from './event.service.js';

/** How deep `all`, `any` and `not` may nest, and how many field tests a `where` may hold (SPEC §22). */
export const MAX_FILTER_DEPTH = 3;
export const MAX_FILTER_TESTS = 20;
export const MAX_IN_VALUES = 100;

/** A field of an event's object, by its API name, or one of its custom values (`custom.<key>`, SPEC §16). */
const FIELD_NAME = '(?:[A-Za-z_][A-Za-z0-9_]{0,63}|custom\\.[a-z][a-z0-9_]{0,39})';
const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/** The names the schemas of filters go by: components of the OpenAPI document, and `$ref`s of the routes. */
export const EVENT_FILTER_ID = 'EventFilter';
const CONDITION_ID = 'EventCondition';

export type FilterScalar = string | number | boolean;

/** One test of a field: exactly one of these. */
export interface FieldTest {
  readonly eq?: FilterScalar;
  readonly neq?: FilterScalar;
  readonly in?: readonly FilterScalar[];
  readonly gte?: string | number;
  readonly lte?: string | number;
  readonly exists?: boolean;
}

/** `{all: [...]}`, `{any: [...]}`, `{not: {...}}` or `{<field>: FieldTest}`: exactly one key. */
export type FilterCondition = Readonly<Record<string, unknown>>;

export interface EventFilter {
  readonly types?: readonly string[];
  readonly changedFields?: readonly string[];
  readonly where?: FilterCondition;
  readonly excludeActors?: readonly string[];
}

const Scalar = Type.Unsafe<FilterScalar>({ type: ['string', 'number', 'boolean'] });
const Ordered = Type.Unsafe<string | number>({ type: ['string', 'number'] });

const FieldTestSchema = Type.Object(
  {
    eq: Type.Optional(Scalar),
    neq: Type.Optional(Scalar),
    in: Type.Optional(Type.Array(Scalar, { minItems: 1, maxItems: MAX_IN_VALUES })),
    gte: Type.Optional(Ordered),
    lte: Type.Optional(Ordered),
    exists: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1, maxProperties: 1, description: 'One operator and its operand.' },
);

/**
 * A condition on the object of an event; recursive (by `$ref` to itself), its depth and its count
 * of tests checked apart (event-filter-checks.ts), as JSON Schema cannot count them.
 */
const EventCondition = Type.Object(
  {
    all: Type.Optional(Type.Array(Type.Ref(CONDITION_ID), { minItems: 1, maxItems: MAX_FILTER_TESTS })),
    any: Type.Optional(Type.Array(Type.Ref(CONDITION_ID), { minItems: 1, maxItems: MAX_FILTER_TESTS })),
    not: Type.Optional(Type.Ref(CONDITION_ID)),
  },
  {
    $id: CONDITION_ID,
    patternProperties: { [`^(?!(?:all|any|not)$)${FIELD_NAME}$`]: FieldTestSchema },
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 1,
    description:
      'A condition on the object of the event after the change (before it, for a delete), with exactly one key: ' +
      '`{"<field>": {"<operator>": value}}`, or `{"all": [conditions]}`, `{"any": [conditions]}`, `{"not": condition}`. ' +
      'A field is an API name of the object (`status`, `score`, `email`…) or `custom.<key>`. Operators: `eq`, `neq`, ' +
      '`in` (a list of values), `gte`, `lte` (numbers by value; text and timestamps in text order) and `exists` ' +
      '(true: the field has a value other than null). On a list (a multiselect), `eq` and `in` mean "contains", ' +
      '`neq` "does not contain". A test of a field the object lacks, or holds null, is false, except `exists: false`. ' +
      `At most ${MAX_FILTER_DEPTH} levels of all/any/not and ${MAX_FILTER_TESTS} tests in all.`,
    examples: [{ all: [{ status: { in: ['qualified', 'won'] } }, { score: { gte: 50 } }] }],
  },
);

/** SPEC §22's filter of a webhook subscription and of the feed (`GET /events?filter=`). */
const EventFilterSchema = Type.Object(
  {
    types: Type.Optional(
      Type.Array(StringEnum(ALL_EVENT_TYPES), {
        minItems: 1,
        maxItems: ALL_EVENT_TYPES.length,
        uniqueItems: true,
        description: 'Only events of these types.',
      }),
    ),
    changedFields: Type.Optional(
      Type.Array(Type.String({ pattern: `^${FIELD_NAME}$` }), {
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        description:
          'An update (`*.updated`, `*.status_changed`, `*.merged`, `lead.converted`) only when it changed one of these fields ' +
          '(API names, `custom.<key>` for a custom value). Creations and deletions change no field and pass: pick ' +
          'them with `types`.',
      }),
    ),
    where: Type.Optional(Type.Ref(CONDITION_ID)),
    excludeActors: Type.Optional(
      Type.Array(Type.String({ pattern: `^(?:self|${UUID})$` }), {
        minItems: 1,
        maxItems: 20,
        uniqueItems: true,
        description:
          'Drops the events these tokens caused (`actor.tokenId`): token ids, or "self", the token that owns the ' +
          'subscription (for the feed: the token reading it). A system that writes into Funil and also listens ' +
          'never hears its own writes back.',
      }),
    ),
  },
  {
    $id: EVENT_FILTER_ID,
    additionalProperties: false,
    description:
      'Which events to deliver, all of its parts at once: `types`, `changedFields`, `where` and `excludeActors`. ' +
      'Events it leaves out are skipped, never delivered or logged.',
    examples: [
      {
        types: ['lead.created', 'lead.updated', 'lead.status_changed'],
        changedFields: ['status', 'score', 'custom.tier'],
        where: { any: [{ status: { eq: 'won' } }, { score: { gte: 80 } }] },
        excludeActors: ['self'],
      },
    ],
  },
);

/** The schemas a route's `$ref` names: added to the app (and its validator) once, each a component of the document. */
export const EVENT_FILTER_SCHEMAS: readonly TSchema[] = [EventCondition, EventFilterSchema];

/** A filter in a route's schema, by reference. */
export const EventFilterRef = Type.Unsafe<EventFilter>(Type.Ref(EVENT_FILTER_ID));
