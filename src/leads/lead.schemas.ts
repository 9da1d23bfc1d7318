import { type Static, Type } from 'typebox';
import { customerFields } from '../customers/customer.fields.js';
import { Customer } from '../customers/customer.schemas.js';
import { leadFields } from './lead.fields.js';

function buildLeadSchemas(fields: typeof leadFields) {
  const { object: Lead, listItem: LeadListItem, createProperties, updateProperties } = fields.schemas;
  const CreateLead = Type.Object(createProperties, {
    additionalProperties: false,
    description: 'name, and an e-mail or a phone, are required.',
    examples: [
      { name: 'Maria Souza', email: 'maria@example.com', phone: '+55 11 91234-5678', source: 'website', score: 40 },
    ],
  });
  const UpdateLead = Type.Object(updateProperties, {
    additionalProperties: false,
    description: 'Partial update: send only the fields to change.',
    examples: [{ score: 80, notes: 'Asked for a demo on Monday.' }],
  });
  const UpdateLeadStatus = Type.Object(
    { status: fields.writeSchemaOf('status') },
    { additionalProperties: false, examples: [{ status: 'contacted' }] },
  );
  const LeadConversion = Type.Object(
    {
      lead: Lead,
      customer: Customer,
      created: Type.Boolean({ description: 'true when the customer was created; false when it existed already.' }),
    },
    { additionalProperties: false },
  );
  return {
    CreateLead,
    UpdateLead,
    UpdateLeadStatus,
    Lead,
    LeadListItem,
    LeadList: Type.Array(LeadListItem),
    ConvertLead,
    LeadConversion,
  };
}

/** SPEC §13: the customer's fields a conversion may set; name, e-mail and phone come from the lead. */
const ConvertLead = Type.Object(
  {
    type: Type.Optional(customerFields.writeSchemaOf('type')),
    value: Type.Optional(customerFields.writeSchemaOf('value')),
    autoPayment: Type.Optional(customerFields.writeSchemaOf('autoPayment')),
    notes: Type.Optional(customerFields.writeSchemaOf('notes')),
    custom: Type.Optional(customerFields.writeSchemaOf('custom')),
  },
  {
    additionalProperties: false,
    description: 'Optional: fields of the customer, when one is created.',
    examples: [{ type: 'company', value: 1500.5, autoPayment: true }],
  },
);

export const leadSchemas = buildLeadSchemas(leadFields);

export type LeadSchemas = typeof leadSchemas;
export type Lead = Static<LeadSchemas['Lead']>;
export type LeadListItem = Static<LeadSchemas['LeadListItem']>;
