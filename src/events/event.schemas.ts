import { type Static, type TSchema, Type } from 'typebox';
import { Nullable, StringEnum, Timestamp } from '../shared/schemas.js';
import { ALL_EVENT_TYPES } from './event.service.js';

const Uuid = Type.String({ format: 'uuid' });

/** Where a page of events starts: keyset paging, as the feed's. */
export const EventAfter = Type.String({
  // 16 hex digits of the transaction, 16 of the sequence number (a bigint: at most 7fff…).
  pattern: '^[0-9a-f]{16}[0-7][0-9a-f]{15}$',
  description: 'The id of the last event read: the page starts after it. Without it, the oldest events kept.',
});
export const EventPageLimit = Type.Integer({
  minimum: 1,
  maximum: 1000,
  default: 100,
  description: 'Events per page (1–1000).',
});

export const EventListQuery = Type.Object(
  {
    after: Type.Optional(EventAfter),
    types: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description: `Comma-separated event types: ${ALL_EVENT_TYPES.join(', ')}.`,
        examples: ['lead.created,lead.status_changed'],
      }),
    ),
    objectId: Type.Optional(
      Type.String({ format: 'uuid', description: "One record's history (also after it was deleted)." }),
    ),
    limit: Type.Optional(EventPageLimit),
    filter: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 8000,
        description:
          'A filter, as the JSON of the `EventFilter` schema, URL-encoded: `{types, changedFields, where, ' +
          'excludeActors}`, "self" being the token reading the feed. A filtered page reads at most about 1,000 ' +
          'events: it may be short, or empty, while `X-Next-Cursor` says more may follow; page on by it.',
        examples: ['{"changedFields":["status"],"excludeActors":["self"]}'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type EventListQuery = Static<typeof EventListQuery>;

/** What an erasure leaves of a record in its events (SPEC §17). */
const IdOnly = Type.Object(
  { _id: Uuid },
  { additionalProperties: false, description: 'An erased record: its id only.' },
);

/**
 * SPEC §14's event, `object` being the full lead or customer object of the app, a pipeline (SPEC
 * §20), or an import or export that ended (SPEC §23).
 */
export function eventSchemas(
  lead: TSchema,
  customer: TSchema,
  pipeline: TSchema,
  importObject: TSchema,
  exportObject: TSchema,
) {
  const Event = Type.Object(
    {
      id: Type.String({ description: 'Opaque; ids sort in feed order. Send the last one read as `after`.' }),
      type: StringEnum(ALL_EVENT_TYPES),
      occurredAt: Timestamp,
      tenant: Uuid,
      actor: Type.Object(
        { tokenId: Nullable(Type.String({ format: 'uuid', description: 'The token that made the change.' })) },
        { additionalProperties: false },
      ),
      requestId: Nullable(Type.String({ description: 'The X-Request-Id of the request that made the change.' })),
      reason: Type.Optional(
        StringEnum(['erasure', 'merge', 'unmerge', 'revert'], {
          description:
            "`erasure`: on a `*.deleted` event, the record was erased at its person's request; `object` is only " +
            '`{_id}`. `merge`: on a `*.deleted` event, the record was merged into `mergedInto`. `unmerge`: the ' +
            'change undid a merge (`POST /merges/{id}/undo`). `revert`: the change put back what an import changed ' +
            '(`POST /imports/{id}/revert`).',
        }),
      ),
      mergedInto: Type.Optional(
        Type.String({
          format: 'uuid',
          description: 'On a `*.deleted` event of reason `merge`: the record it went into.',
        }),
      ),
      redacted: Type.Optional(
        Type.Literal(true, {
          description: 'An erasure of personal data redacted this event: `object` is only `{_id}`, `previous` is null.',
        }),
      ),
      data: Type.Object(
        {
          object: Type.Union([lead, customer, pipeline, importObject, exportObject, IdOnly], {
            description:
              'The full object after the change (before it, for a delete): a lead, a customer or a pipeline; only ' +
              '`{_id}` once erased. On `import.finished` and `export.finished`: the import or export as ' +
              '`GET /imports/{id}` or `GET /exports/{id}` showed it when it ended (succeeded, failed or cancelled); ' +
              'its `resource` says which read scope sees it.',
          }),
          changedFields: Type.Array(Type.String(), {
            description: 'The fields the change changed; [] on create and delete, and on `*.finished`.',
          }),
          previous: Nullable(
            Type.Record(Type.String(), Type.Unknown(), {
              description: 'The former value of each changed field; null once redacted.',
            }),
          ),
          mergedIds: Type.Optional(
            Type.Array(Type.String({ format: 'uuid' }), {
              description: 'On a `*.merged` event: the records merged in.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  );
  return { Event, EventList: Type.Array(Event) };
}

export type EventSchemas = ReturnType<typeof eventSchemas>;
