import { type Static, Type } from 'typebox';
import { IgnoredOnWrite, Nullable, StringEnum, Timestamp, TrimmedString } from '../http/schemas.js';

/** Built per app: the lead statuses are configurable (FUNIL_LEAD_STATUSES, SPEC §3). */
export function leadSchemas(statuses: readonly string[]) {
  const Status = StringEnum(statuses, { description: 'Pipeline stage.', examples: [statuses[0]] });
  const writable = {
    name: TrimmedString({ minLength: 1, maxLength: 200, examples: ['Maria Silva'] }),
    email: Nullable(
      TrimmedString({ maxLength: 254, format: 'email', lowercase: true, examples: ['maria@example.com'] }),
    ),
    phone: Nullable(TrimmedString({ maxLength: 50, examples: ['+55 11 91234-5678'] })),
    source: Nullable(TrimmedString({ maxLength: 100, examples: ['website'] })),
    status: Status,
    score: Type.Integer({ minimum: 0, maximum: 100, examples: [40] }),
    lastContact: Nullable(Type.String({ format: 'date-time', examples: ['2026-11-20T15:30:00.000Z'] })),
    notes: Nullable(Type.String({ maxLength: 10_000 })),
  };
  const readOnly = {
    _id: IgnoredOnWrite,
    id: IgnoredOnWrite,
    tenant: IgnoredOnWrite,
    createdBy: IgnoredOnWrite,
    createdAt: IgnoredOnWrite,
    updatedAt: IgnoredOnWrite,
  };
  const optional = {
    email: Type.Optional(writable.email),
    phone: Type.Optional(writable.phone),
    source: Type.Optional(writable.source),
    status: Type.Optional(writable.status),
    score: Type.Optional(writable.score),
    lastContact: Type.Optional(writable.lastContact),
    notes: Type.Optional(writable.notes),
  };

  const CreateLead = Type.Object(
    { name: writable.name, ...optional, ...readOnly },
    { additionalProperties: false, description: 'name, and an e-mail or a phone, are required.' },
  );
  const UpdateLead = Type.Object(
    { name: Type.Optional(writable.name), ...optional, ...readOnly },
    { additionalProperties: false, description: 'Partial update: send only the fields to change.' },
  );
  const UpdateLeadStatus = Type.Object({ status: Status }, { additionalProperties: false });

  const Lead = Type.Object(
    {
      _id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      email: Nullable(Type.String()),
      phone: Nullable(Type.String()),
      source: Nullable(Type.String()),
      status: Type.String(),
      score: Type.Integer(),
      lastContact: Nullable(Timestamp),
      notes: Nullable(Type.String()),
      tenant: Type.String({ format: 'uuid' }),
      createdBy: Type.String({ format: 'uuid' }),
      createdAt: Timestamp,
      updatedAt: Timestamp,
    },
    { additionalProperties: false },
  );
  /** Seed §2.1 rule 2: list items carry exactly these nine fields. */
  const LeadListItem = Type.Object(
    {
      _id: Lead.properties._id,
      name: Lead.properties.name,
      email: Lead.properties.email,
      status: Lead.properties.status,
      score: Lead.properties.score,
      lastContact: Lead.properties.lastContact,
      source: Lead.properties.source,
      createdAt: Lead.properties.createdAt,
      updatedAt: Lead.properties.updatedAt,
    },
    { additionalProperties: false },
  );

  return { CreateLead, UpdateLead, UpdateLeadStatus, Lead, LeadListItem, LeadList: Type.Array(LeadListItem) };
}

type LeadSchemas = ReturnType<typeof leadSchemas>;
export type CreateLeadBody = Static<LeadSchemas['CreateLead']>;
export type UpdateLeadBody = Static<LeadSchemas['UpdateLead']>;
export type Lead = Static<LeadSchemas['Lead']>;
export type LeadListItem = Static<LeadSchemas['LeadListItem']>;
