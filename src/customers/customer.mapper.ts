import { validationFailed } from '../http/errors.js';
import { fieldMessage, fieldMessages } from '../http/messages.js';
import { pickWritable, toIso, truncate } from '../shared/fields.js';
import type { CustomerListRow, CustomerRow, CustomerValues } from './customer.repository.js';
import type { Customer } from './customer.schemas.js';

export const CUSTOMER_WRITABLE_FIELDS = [
  'name',
  'email',
  'firstName',
  'lastName',
  'phone',
  'status',
  'type',
  'value',
  'autoPayment',
  'notes',
] as const satisfies readonly (keyof CustomerValues)[];

export function customerChanges(body: Readonly<Record<string, unknown>>): Partial<CustomerValues> {
  const changes = pickWritable(body, CUSTOMER_WRITABLE_FIELDS) as Partial<CustomerValues>;
  if (changes.value !== undefined && !hasAtMostTwoDecimals(changes.value)) {
    throw validationFailed([{ field: 'value', message: fieldMessage('value', fieldMessages.decimals()) }]);
  }
  return changes;
}

/**
 * `multipleOf: 0.01` tolerates 1e-9 of float error, so 5.000000000001 or 1e-12 would pass it and be
 * rounded by numeric(14, 2) without a word. A number has at most 2 decimals when it is the double
 * nearest to its own 2-decimal rendering (0.07 and 19.99 are; 0.001 and 1e-12 are not).
 */
function hasAtMostTwoDecimals(value: number): boolean {
  return Number(value.toFixed(2)) === value;
}

/** SPEC §4: first name is the first word of `name`, last name the rest (null when there is none). */
export function splitName(name: string): { firstName: string; lastName: string | null } {
  const [first = '', ...rest] = name.trim().split(/\s+/);
  return { firstName: truncate(first, 100), lastName: rest.length ? truncate(rest.join(' '), 100) : null };
}

/** A customer row: from a single read (Dates) or, renamed, from a list (PostgreSQL's timestamp text). */
type CustomerFields = Omit<CustomerRow, 'tenantId' | 'version' | 'createdAt' | 'updatedAt'> & {
  createdAt: Date | string;
  updatedAt: Date | string;
};

export function toCustomer(row: CustomerFields): Customer {
  return {
    _id: row.id,
    id: row.id,
    firstName: row.firstName,
    lastName: row.lastName,
    name: row.name,
    email: row.email,
    phone: row.phone,
    status: row.status,
    type: row.type,
    value: Number(row.value),
    autoPayment: row.autoPayment,
    notes: row.notes,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  };
}

/** A list row, named as its SQL names it (CustomerRepository.list), as the same customer. */
export function toCustomerListItem(row: CustomerListRow): Customer {
  return toCustomer({
    ...row,
    firstName: row.first_name,
    lastName: row.last_name,
    autoPayment: row.auto_payment,
    createdAt: row.created_at_text,
    updatedAt: row.updated_at_text,
  });
}
