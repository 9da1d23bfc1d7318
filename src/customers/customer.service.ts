import type { Actor } from '../auth/caller.js';
import type { Db } from '../db/database.js';
import type { ExpectedVersions } from '../db/precondition.js';
import type { CustomFieldCatalog } from '../fields/custom-field-catalog.js';
import type { MatchKeyRules } from '../records/match-key-rules.js';
import { RecordService, type Stored } from '../records/record.service.js';
import type { CreateInput, RecordObject, UpdateInput } from '../records/record-fields.js';
import { fixedStatuses } from '../records/status-rules.js';
import { validationFailed } from '../shared/errors.js';
import { truncate } from '../shared/fields.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import {
  CUSTOMER_STATUSES,
  type CustomerFieldTable,
  type CustomerListKeys,
  customerFields,
} from './customer.fields.js';
import { customerMessages } from './customer.messages.js';
import { CUSTOMER_EMAIL_KEY, CUSTOMER_EXTERNAL_ID_KEY, customerStore } from './customer.repository.js';

export type CreateCustomerInput = CreateInput<CustomerFieldTable>;
export type UpdateCustomerInput = UpdateInput<CustomerFieldTable>;
export type CustomerObject = RecordObject<CustomerFieldTable>;

/** Every rule of a customer write (SPEC §4): defaults, names from parts, a unique e-mail, at most 2 decimals. */
export class CustomerService extends RecordService<CustomerFieldTable, CustomerListKeys> {
  /** Run in the transaction that deletes a customer, before it commits (the leads converted to it lose the link). */
  onDelete: ((trx: Db, actor: Actor, id: string) => Promise<void>) | undefined;

  /**
   * `scanRows`: the most rows a filtered list page reads (RecordStore.list); `catalog`: the
   * tenants' own fields, shared with the routes that change them; `matchKeys`: SPEC §21's keys.
   */
  constructor({
    db,
    scanRows,
    catalog,
    matchKeys,
  }: { db: Db; scanRows: number | undefined; catalog: CustomFieldCatalog; matchKeys: MatchKeyRules }) {
    super({
      store: customerStore(db, scanRows),
      fields: customerFields,
      notFoundText: customerMessages.customerNotFound,
      statusRules: fixedStatuses(CUSTOMER_STATUSES),
      uniqueFields: [
        {
          field: 'email',
          column: 'email',
          constraint: CUSTOMER_EMAIL_KEY,
          text: customerMessages.customerEmailTaken,
          readScope: 'customers:read',
        },
        {
          field: 'externalId',
          column: 'externalId',
          constraint: CUSTOMER_EXTERNAL_ID_KEY,
          text: customerMessages.customerExternalIdTaken,
          readScope: 'customers:read',
        },
      ],
      customFields: catalog.forResource('customer'),
      matchKeys,
      // A merge takes a name and its parts together.
      merging: { groups: [['name', 'firstName', 'lastName']] },
    });
  }

  /** SPEC §13: deleting a customer, and the leads converted to it unlinked, in one transaction. */
  override delete(handle: Db, actor: Actor, id: string, expected?: ExpectedVersions): Promise<void> {
    return this.transaction(handle, async (trx) => {
      await super.delete(trx, actor, id, expected);
      await this.onDelete?.(trx, actor, id);
    });
  }

  /** SPEC §17 and §13: an erased customer's leads lose the link too, in the erasure's transaction. */
  override erase(handle: Db, actor: Actor, id: string, email: string, redact: (trx: Db) => Promise<void>) {
    return super.erase(handle, actor, id, email, async (trx) => {
      await redact(trx);
      await this.onDelete?.(trx, actor, id);
    });
  }

  protected createValues(_actor: Actor, input: CreateCustomerInput): Record<string, unknown> {
    const changes = withValidValue(this.fields.writableOf(input));
    return { ...this.fields.defaults, ...splitName(input.name), ...changes };
  }

  update(
    handle: Db,
    actor: Actor,
    id: string,
    input: UpdateCustomerInput,
    expected?: ExpectedVersions,
  ): Promise<Stored<CustomerObject>> {
    const changes = withValidValue(this.changesOf(input));
    if (changes.name != null) {
      return this.write(handle, actor, id, { ...splitName(changes.name), ...changes }, { expected });
    }
    const fromParts = 'firstName' in changes || 'lastName' in changes;
    return this.write(handle, actor, id, changes, { expected, derived: fromParts ? ['nameFromParts'] : [] });
  }
}

/**
 * `multipleOf: 0.01` tolerates 1e-9 of float error, so 5.000000000001 or 1e-12 would pass it and be
 * rounded by numeric(14, 2) without a word. A number has at most 2 decimals when it is the double
 * nearest to its own 2-decimal rendering (0.07 and 19.99 are; 0.001 and 1e-12 are not).
 */
function withValidValue<T extends { value?: number | undefined }>(changes: T): T {
  if (changes.value !== undefined && Number(changes.value.toFixed(2)) !== changes.value) {
    throw validationFailed([{ field: 'value', message: fieldMessage('value', fieldMessages.decimals()) }]);
  }
  return changes;
}

/** SPEC §4: first name is the first word of `name`, last name the rest (null when there is none). */
export function splitName(name: string): { firstName: string; lastName: string | null } {
  const [first = '', ...rest] = name.trim().split(/\s+/);
  return { firstName: truncate(first, 100), lastName: rest.length ? truncate(rest.join(' '), 100) : null };
}
