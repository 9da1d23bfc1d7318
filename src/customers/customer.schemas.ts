import { type Static, Type } from 'typebox';
import { customerFields } from './customer.fields.js';

export { CUSTOMER_STATUSES, CUSTOMER_TYPES, MAX_CUSTOMER_VALUE } from './customer.fields.js';

const { object, createProperties, updateProperties } = customerFields.schemas;

export const CreateCustomer = Type.Object(createProperties, {
  additionalProperties: false,
  examples: [
    { name: 'Maria Souza', email: 'maria@example.com', phone: '+55 11 91234-5678', type: 'individual', value: 1200.5 },
  ],
});

export const UpdateCustomer = Type.Object(updateProperties, {
  additionalProperties: false,
  description: 'Partial update: send only the fields to change.',
  examples: [{ value: 2400, autoPayment: true }],
});

export const UpdateCustomerStatus = Type.Object(
  { status: customerFields.writeSchemaOf('status') },
  { additionalProperties: false, examples: [{ status: 'inactive' }] },
);

export const Customer = object;

export const CustomerList = Type.Array(Customer);

export type Customer = Static<typeof Customer>;
