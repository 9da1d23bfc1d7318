import { type Static, Type } from 'typebox';
import { ALL_EVENT_TYPES } from '../events/event.service.js';
import { EventFilterRef } from '../events/event-filter.schemas.js';
import { Nullable, StringEnum, Timestamp, TrimmedString } from '../shared/schemas.js';

const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  format: 'uri',
  description: 'An https:// URL that resolves to a public address.',
  examples: ['https://example.com/funil/webhooks'],
});
const EventTypes = Type.Array(StringEnum([...ALL_EVENT_TYPES, '*']), {
  minItems: 1,
  maxItems: 20,
  uniqueItems: true,
  description:
    'Event types to receive, or ["*"] for every type the creating token could read. `import.finished` and ' +
    '`export.finished` come only for the resources (lead, customer) its read scopes cover.',
  examples: [['lead.created', 'lead.status_changed']],
});
const Description = Nullable(TrimmedString({ maxLength: 500, description: 'Free text for people.' }));
const Filter = Type.Union([EventFilterRef, Type.Null()], {
  description:
    'Which of its events it delivers (see `EventFilter`); null: all of them. Only an event of `events` that passes ' +
    'the filter is delivered; the others make no delivery and no entry in the log. "self" in `excludeActors` is ' +
    'the token that owns the subscription.',
});

export const WebhookCreate = Type.Object(
  {
    url: Url,
    events: EventTypes,
    description: Type.Optional(Description),
    active: Type.Optional(Type.Boolean()),
    filter: Type.Optional(Filter),
  },
  {
    additionalProperties: false,
    examples: [
      {
        url: 'https://example.com/funil/webhooks',
        events: ['lead.created', 'lead.updated', 'lead.status_changed'],
        description: 'CRM sync',
        filter: { changedFields: ['status', 'score', 'custom.tier'], excludeActors: ['self'] },
      },
    ],
  },
);
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookUpdate = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventTypes),
    description: Type.Optional(Description),
    active: Type.Optional(
      Type.Boolean({ description: 'false pauses it; true again starts it from the present (no backlog).' }),
    ),
    filter: Type.Optional(Filter),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ events: ['lead.created', 'lead.converted'], description: 'CRM sync, conversions too' }],
  },
);
export type WebhookUpdate = Static<typeof WebhookUpdate>;

export const Webhook = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    active: Type.Boolean(),
    disabledReason: Nullable(
      Type.String({ description: 'Why Funil turned it off: the same as `pausedReason`, its former name.' }),
    ),
    pausedReason: Nullable(
      Type.String({
        description:
          'Why Funil turned it off: `token_revoked` (the token that created it was revoked or expired; a token with ' +
          'the read scopes of its events may turn it on again, and becomes its owner), a 410, or 5 days of failures.',
      }),
    ),
    filter: Filter,
    previousSecretExpiresAt: Nullable(
      Type.String({ format: 'date-time', description: 'Until then, secrets replaced by rotations sign too.' }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);
export type Webhook = Static<typeof Webhook>;

export const WebhookWithSecret = Type.Object(
  {
    ...Webhook.properties,
    secret: Type.String({
      pattern: '^whsec_',
      description: 'The signing secret (Standard Webhooks). Shown only in this answer: keep it.',
    }),
  },
  { additionalProperties: false },
);

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const Delivery = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    eventId: Type.String({ description: 'The event id, sent as `webhook-id` (the same on every attempt).' }),
    eventType: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    tries: Type.Integer({ description: 'Attempts made so far (the number of the latest).' }),
    lastAttemptAt: Nullable(Timestamp),
    httpStatus: Nullable(Type.Integer({ description: "The latest attempt's HTTP status." })),
    error: Nullable(Type.String({ description: 'Why the latest attempt got no answer (timeout, refused address…).' })),
    durationMs: Nullable(Type.Integer()),
    response: Nullable(Type.String({ description: 'The first 1 KiB of the latest answer.' })),
    nextAttemptAt: Nullable(Timestamp),
    createdAt: Timestamp,
    attempts: Type.Array(
      Type.Object(
        {
          try: Type.Integer(),
          at: Timestamp,
          httpStatus: Nullable(Type.Integer()),
          error: Nullable(Type.String()),
          durationMs: Type.Integer(),
          response: Nullable(Type.String({ description: 'The first 1 KiB of the answer.' })),
        },
        { additionalProperties: false },
      ),
      { description: 'Every attempt made, oldest first (a retry by hand adds to them).' },
    ),
  },
  { additionalProperties: false },
);
export type Delivery = Static<typeof Delivery>;

export const DeliveryListQuery = Type.Object(
  {
    status: Type.Optional({ ...StringEnum(DELIVERY_STATUSES), description: 'Only the deliveries in this state.' }),
    before: Type.Optional(
      Type.String({ format: 'uuid', description: 'The id of the last delivery read: the page continues after it.' }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Deliveries per page (1–100).' }),
    ),
  },
  { additionalProperties: false },
);
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

export const DeliveryParams = Type.Object(
  {
    id: Type.String({ description: "The subscription's id." }),
    deliveryId: Type.String({ description: "The delivery's id, from the delivery log." }),
  },
  { additionalProperties: false },
);
