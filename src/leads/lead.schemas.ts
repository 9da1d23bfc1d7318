import { type Static, Type } from 'typebox';
import { leadFields } from './lead.fields.js';

/** Built per app: the lead statuses are configurable (FUNIL_LEAD_STATUSES, SPEC §3). */
export function leadSchemas(statuses: readonly string[], fields = leadFields(statuses)) {
  const { object: Lead, listItem: LeadListItem, createProperties, updateProperties } = fields.schemas;
  const CreateLead = Type.Object(createProperties, {
    additionalProperties: false,
    description: 'name, and an e-mail or a phone, are required.',
  });
  const UpdateLead = Type.Object(updateProperties, {
    additionalProperties: false,
    description: 'Partial update: send only the fields to change.',
  });
  const UpdateLeadStatus = Type.Object({ status: fields.writeSchemaOf('status') }, { additionalProperties: false });
  return { CreateLead, UpdateLead, UpdateLeadStatus, Lead, LeadListItem, LeadList: Type.Array(LeadListItem) };
}

type LeadSchemas = ReturnType<typeof leadSchemas>;
export type Lead = Static<LeadSchemas['Lead']>;
export type LeadListItem = Static<LeadSchemas['LeadListItem']>;
