import { type Static, type TSchema, Type } from 'typebox';
import { EventAfter, EventPageLimit } from '../events/event.schemas.js';
import { TrimmedString } from '../shared/schemas.js';

const Email = TrimmedString({
  minLength: 3,
  maxLength: 254,
  format: 'email',
  lowercase: true,
  description: "The person's e-mail address, any case.",
  examples: ['maria@example.com'],
});

export const PersonalDataQuery = Type.Object(
  {
    email: Email,
    after: Type.Optional({
      ...EventAfter,
      description: "The id of the last event read: the page's events start after it. Without it, the oldest kept.",
    }),
    limit: Type.Optional(EventPageLimit),
  },
  { additionalProperties: false },
);
export type PersonalDataQuery = Static<typeof PersonalDataQuery>;
export const ErasureRequest = Type.Object(
  { email: Email },
  { additionalProperties: false, examples: [{ email: 'maria@example.com' }] },
);

/** SPEC §17's access answer, with the app's lead, customer and event schemas. */
export function personalDataAnswer(lead: TSchema, customer: TSchema, events: TSchema) {
  return Type.Object(
    {
      email: Type.String(),
      leads: Type.Array(lead, {
        description: 'The leads with this e-mail, full objects, oldest first; all of them on every page.',
      }),
      customers: Type.Array(customer, {
        description: 'The customers with this e-mail, full objects; all of them on every page.',
      }),
      events: {
        ...events,
        description:
          'A page of the events of those records, and of any record that held this e-mail before or after a change ' +
          '(one deleted since, or whose e-mail changed), in feed order, as long as events are kept.',
      },
    },
    { additionalProperties: false },
  );
}

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const ErasureAnswer = Type.Object(
  {
    leads: Count('Leads deleted.'),
    customers: Count('Customers deleted.'),
    events: Count('Earlier events redacted (each now holds only its record id).'),
  },
  { additionalProperties: false },
);
