import { Type } from 'typebox';
import { CustomInput, CustomValues } from '../fields/custom-value.schemas.js';
import { recordFields } from '../records/record-fields.js';
import { ExternalId, Nullable, StringEnum, Timestamp, TrimmedString } from '../shared/schemas.js';

export const CUSTOMER_STATUSES = ['active', 'inactive', 'blocked'] as const;
export const CUSTOMER_TYPES = ['individual', 'company'] as const;
/** numeric(14, 2): the largest value the column holds. */
export const MAX_CUSTOMER_VALUE = 999_999_999_999.99;

/** A customer's fields, declared once (SPEC §4), in the order of the object. */
const CUSTOMER_FIELD_TABLE = {
  _id: { read: Type.String({ format: 'uuid' }), column: 'id' },
  id: { read: Type.String({ format: 'uuid', description: 'Same value as _id.' }) },
  // Without a default: when not given, the service derives them from `name` (SPEC §4).
  firstName: { read: Nullable(Type.String()), write: Nullable(TrimmedString({ maxLength: 100, examples: ['Maria'] })) },
  lastName: { read: Nullable(Type.String()), write: Nullable(TrimmedString({ maxLength: 100, examples: ['Silva'] })) },
  name: {
    read: Type.String(),
    write: TrimmedString({ minLength: 1, maxLength: 200, examples: ['Maria Silva'] }),
    required: true,
  },
  email: {
    read: Type.String(),
    write: TrimmedString({
      minLength: 1,
      maxLength: 254,
      format: 'email',
      lowercase: true,
      examples: ['maria@example.com'],
    }),
    required: true,
  },
  phone: { read: Nullable(Type.String()), write: Nullable(TrimmedString({ maxLength: 50 })), default: null },
  status: { read: Type.String(), write: StringEnum(CUSTOMER_STATUSES, { examples: ['active'] }), default: 'active' },
  type: { read: Type.String(), write: StringEnum(CUSTOMER_TYPES, { examples: ['individual'] }), default: 'individual' },
  value: {
    read: Type.Number(),
    write: Type.Number({ minimum: 0, maximum: MAX_CUSTOMER_VALUE, multipleOf: 0.01, examples: [0] }),
    default: 0,
    storage: 'money',
  },
  autoPayment: { read: Type.Boolean(), write: Type.Boolean(), default: false },
  notes: { read: Nullable(Type.String()), write: Nullable(Type.String({ maxLength: 10_000 })), default: null },
  externalId: { read: Nullable(Type.String()), write: ExternalId, default: null },
  custom: { read: CustomValues, write: CustomInput, default: {}, storage: 'object' },
  createdAt: { read: Timestamp, storage: 'timestamp' },
  updatedAt: { read: Timestamp, storage: 'timestamp' },
} as const;

/** SPEC §4: the list returns full objects. */
const CUSTOMER_LIST_KEYS = Object.keys(CUSTOMER_FIELD_TABLE) as (keyof typeof CUSTOMER_FIELD_TABLE)[];

export const customerFields = recordFields(CUSTOMER_FIELD_TABLE, CUSTOMER_LIST_KEYS);

export type CustomerFieldTable = typeof CUSTOMER_FIELD_TABLE;
export type CustomerListKeys = typeof CUSTOMER_LIST_KEYS;
