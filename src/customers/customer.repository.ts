import { type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import type { Db } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { type KeysetPage, keysetPage, type SortKey } from '../db/keyset.js';
import { containsPattern } from '../db/like-pattern.js';
import { conditionalWrite, type ExpectedVersions } from '../db/precondition.js';
import type { CustomerTable, Tables } from '../db/tables.js';
import { newId } from '../shared/ids.js';

export type CustomerRow = Selectable<CustomerTable>;

export interface CustomerValues {
  name: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  phone: string | null;
  status: string;
  type: string;
  value: number;
  autoPayment: boolean;
  notes: string | null;
}

export interface CustomerPatch extends Partial<CustomerValues> {
  /** Rebuild `name` from first and last name, as stored after this update (SPEC §4). */
  nameFromParts?: boolean;
}

export interface CustomerFilters {
  statuses?: string[] | undefined;
  type?: string | undefined;
  email?: string | undefined;
  q?: string | undefined;
  updatedSince?: string | undefined;
  createdSince?: string | undefined;
}

export type CustomerSortField = 'createdAt' | 'updatedAt' | 'name';

/** Each sort as its index is built (migrations 2026-11-21T1000 and T1200). */
export const CUSTOMER_SORT_KEYS: Record<CustomerSortField, SortKey<CustomerRow>> = {
  createdAt: { expression: sql`created_at`, type: 'timestamptz', valueOf: (row) => row.createdAt.toISOString() },
  updatedAt: { expression: sql`updated_at`, type: 'timestamptz', valueOf: (row) => row.updatedAt.toISOString() },
  name: { expression: sql`name`, type: 'text', valueOf: (row) => row.name },
};

/** Thrown when the tenant already has a customer with that e-mail. */
export class EmailTakenError extends Error {
  constructor(readonly existingId: string | undefined) {
    super('customer e-mail already used in this tenant');
  }
}

const CUSTOMER_COLUMNS = [
  'id',
  'tenantId',
  'firstName',
  'lastName',
  'name',
  'email',
  'phone',
  'status',
  'type',
  'value',
  'autoPayment',
  'notes',
  'createdAt',
  'updatedAt',
  'version',
] as const;

const EMAIL_KEY = 'customers_tenant_email_key';

/** Every query takes the tenant first: a customer of another tenant does not exist here. */
export class CustomerRepository {
  constructor(private readonly db: Db) {}

  /** The one place lists are queried: filters, then a keyset page (SPEC §6). */
  list(tenantId: string, filters: CustomerFilters, page: KeysetPage<CustomerRow>): Promise<CustomerRow[]> {
    const query = this.db.selectFrom('customers').select(CUSTOMER_COLUMNS).where('tenantId', '=', tenantId);
    return keysetPage(applyCustomerFilters(query, filters), page).execute();
  }

  find(tenantId: string, id: string): Promise<CustomerRow | undefined> {
    return this.db
      .selectFrom('customers')
      .select(CUSTOMER_COLUMNS)
      .where('tenantId', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  create(tenantId: string, values: CustomerValues): Promise<CustomerRow> {
    return this.#mapEmailConflict(tenantId, values.email, () =>
      this.db
        .insertInto('customers')
        .values({ ...values, id: newId(), tenantId })
        .returning(CUSTOMER_COLUMNS)
        .executeTakeFirstOrThrow(),
    );
  }

  /**
   * Updates in one statement, the If-Match condition included; undefined when the customer is not
   * in the tenant; throws PreconditionFailedError when it is, in another version.
   */
  update(
    tenantId: string,
    id: string,
    patch: CustomerPatch,
    expected?: ExpectedVersions,
  ): Promise<CustomerRow | undefined> {
    const { nameFromParts, ...values } = patch;
    const changes: Record<string, unknown> = {
      ...values,
      updatedAt: sql<Date>`clock_timestamp()`,
      version: sql<number>`version + 1`,
    };
    if (nameFromParts) {
      const first = 'firstName' in values ? sql`${values.firstName}::text` : sql.ref('firstName');
      const last = 'lastName' in values ? sql`${values.lastName}::text` : sql.ref('lastName');
      // Both parts cleared leave the name as it was: a name cannot be cleared.
      changes.name = sql`coalesce(nullif(left(concat_ws(' ', ${first}, ${last}), 200), ''), ${sql.ref('name')})`;
    }
    // Locked before updatedAt is taken: see LeadRepository.update.
    let query = this.db
      .with('locked', (db) =>
        db
          .selectFrom('customers')
          .select('id as lockedId')
          .where('tenantId', '=', tenantId)
          .where('id', '=', id)
          .forUpdate(),
      )
      .updateTable('customers')
      .from('locked')
      .set(changes)
      .whereRef('customers.id', '=', 'locked.lockedId');
    if (expected?.length) query = query.where('version', 'in', expected);
    return this.#mapEmailConflict(tenantId, values.email, () =>
      conditionalWrite(
        expected,
        () => query.returning(CUSTOMER_COLUMNS).executeTakeFirst(),
        () => this.#exists(tenantId, id),
      ),
    );
  }

  /** Deletes in one statement, the If-Match condition included; false when the customer is not in the tenant. */
  async delete(tenantId: string, id: string, expected?: ExpectedVersions): Promise<boolean> {
    let query = this.db.deleteFrom('customers').where('tenantId', '=', tenantId).where('id', '=', id);
    if (expected?.length) query = query.where('version', 'in', expected);
    const deleted = await conditionalWrite(
      expected,
      () => query.returning('id').executeTakeFirst(),
      () => this.#exists(tenantId, id),
    );
    return deleted !== undefined;
  }

  async #exists(tenantId: string, id: string): Promise<boolean> {
    return (await this.find(tenantId, id)) !== undefined;
  }

  findIdByEmail(tenantId: string, email: string): Promise<string | undefined> {
    return this.db
      .selectFrom('customers')
      .select('id')
      .where('tenantId', '=', tenantId)
      .where('email', '=', email)
      .executeTakeFirst()
      .then((row) => row?.id);
  }

  async #mapEmailConflict<T>(tenantId: string, email: string | undefined, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (email !== undefined && isUniqueViolation(error, EMAIL_KEY)) {
        throw new EmailTakenError(await this.findIdByEmail(tenantId, email));
      }
      throw error;
    }
  }
}

function applyCustomerFilters<O>(
  query: SelectQueryBuilder<Tables, 'customers', O>,
  filters: CustomerFilters,
): SelectQueryBuilder<Tables, 'customers', O> {
  let filtered = query;
  if (filters.statuses) filtered = filtered.where('status', 'in', filters.statuses);
  if (filters.type !== undefined) filtered = filtered.where('type', '=', filters.type);
  if (filters.email !== undefined) filtered = filtered.where('email', '=', filters.email);
  if (filters.updatedSince !== undefined) filtered = filtered.where('updatedAt', '>=', new Date(filters.updatedSince));
  if (filters.createdSince !== undefined) filtered = filtered.where('createdAt', '>=', new Date(filters.createdSince));
  if (filters.q !== undefined) {
    const pattern = containsPattern(filters.q);
    filtered = filtered.where((eb) =>
      eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern), eb('phone', 'ilike', pattern)]),
    );
  }
  return filtered;
}
