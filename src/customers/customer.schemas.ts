import { type Static, Type } from 'typebox';
import { IgnoredOnWrite, Nullable, StringEnum, Timestamp, TrimmedString } from '../http/schemas.js';

export const CUSTOMER_STATUSES = ['active', 'inactive', 'blocked'] as const;
export const CUSTOMER_TYPES = ['individual', 'company'] as const;
/** numeric(14, 2): the largest value the column holds. */
export const MAX_CUSTOMER_VALUE = 999_999_999_999.99;

const Status = StringEnum(CUSTOMER_STATUSES, { examples: ['active'] });

const writable = {
  name: TrimmedString({ minLength: 1, maxLength: 200, examples: ['Maria Silva'] }),
  email: TrimmedString({
    minLength: 1,
    maxLength: 254,
    format: 'email',
    lowercase: true,
    examples: ['maria@example.com'],
  }),
  firstName: Nullable(TrimmedString({ maxLength: 100, examples: ['Maria'] })),
  lastName: Nullable(TrimmedString({ maxLength: 100, examples: ['Silva'] })),
  phone: Nullable(TrimmedString({ maxLength: 50 })),
  status: Status,
  type: StringEnum(CUSTOMER_TYPES, { examples: ['individual'] }),
  value: Type.Number({ minimum: 0, maximum: MAX_CUSTOMER_VALUE, multipleOf: 0.01, examples: [0] }),
  autoPayment: Type.Boolean(),
  notes: Nullable(Type.String({ maxLength: 10_000 })),
};

const readOnly = { _id: IgnoredOnWrite, id: IgnoredOnWrite, createdAt: IgnoredOnWrite, updatedAt: IgnoredOnWrite };

const optional = {
  firstName: Type.Optional(writable.firstName),
  lastName: Type.Optional(writable.lastName),
  phone: Type.Optional(writable.phone),
  status: Type.Optional(writable.status),
  type: Type.Optional(writable.type),
  value: Type.Optional(writable.value),
  autoPayment: Type.Optional(writable.autoPayment),
  notes: Type.Optional(writable.notes),
};

export const CreateCustomer = Type.Object(
  { name: writable.name, email: writable.email, ...optional, ...readOnly },
  { additionalProperties: false },
);

export const UpdateCustomer = Type.Object(
  { name: Type.Optional(writable.name), email: Type.Optional(writable.email), ...optional, ...readOnly },
  { additionalProperties: false, description: 'Partial update: send only the fields to change.' },
);

export const UpdateCustomerStatus = Type.Object({ status: Status }, { additionalProperties: false });

export const Customer = Type.Object(
  {
    _id: Type.String({ format: 'uuid' }),
    id: Type.String({ format: 'uuid', description: 'Same value as _id.' }),
    firstName: Nullable(Type.String()),
    lastName: Nullable(Type.String()),
    name: Type.String(),
    email: Type.String(),
    phone: Nullable(Type.String()),
    status: Type.String(),
    type: Type.String(),
    value: Type.Number(),
    autoPayment: Type.Boolean(),
    notes: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const CustomerList = Type.Array(Customer);

export type Customer = Static<typeof Customer>;
