import { type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import type { Db } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { type KeysetPage, keysetPage, rowsAsNamed, type SortKey } from '../db/keyset.js';
import { containsPattern } from '../db/like-pattern.js';
import { conditionalWrite, type ExpectedVersions, versionIn, writeShapeKey } from '../db/precondition.js';
import { PreparedByShape, PreparedQuery } from '../db/prepared-query.js';
import type { CustomerTable, Tables } from '../db/tables.js';
import { timestampText } from '../db/timestamp-text.js';
import { newId } from '../shared/ids.js';
import type { Customer } from './customer.schemas.js';

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
export const CUSTOMER_SORT_KEYS: Record<CustomerSortField, SortKey<Customer>> = {
  createdAt: { expression: sql`created_at`, type: 'timestamptz', valueOf: (item) => item.createdAt },
  updatedAt: { expression: sql`updated_at`, type: 'timestamptz', valueOf: (item) => item.updatedAt },
  name: { expression: sql`name`, type: 'text', valueOf: (item) => item.name },
};

/** A list item's columns (SPEC §4), timestamps as PostgreSQL's text, under names of their own (see LeadRepository). */
const LIST_COLUMNS = [
  'id',
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
  timestampText('createdAt').as('createdAtText'),
  timestampText('updatedAt').as('updatedAtText'),
] as const;

/** A list row as the SQL names it (snake_case: it skips the camel-case plugin's copy, see rowsAsNamed). */
export interface CustomerListRow {
  id: string;
  first_name: string | null;
  last_name: string | null;
  name: string;
  email: string;
  phone: string | null;
  status: string;
  type: string;
  value: string;
  auto_payment: boolean;
  notes: string | null;
  created_at_text: string;
  updated_at_text: string;
}

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

interface CustomerKey {
  tenantId: string;
  id: string;
}

/** What an update sets, whether it rebuilds the name, whether it carries an If-Match condition. */
interface WriteShape {
  columns: readonly (keyof CustomerValues)[];
  nameFromParts: boolean;
  conditional: boolean;
}

type WriteParams = CustomerKey & Partial<CustomerValues> & { versions?: readonly number[] };

/** Every query takes the tenant first: a customer of another tenant does not exist here. */
export class CustomerRepository {
  readonly #find: PreparedQuery<CustomerKey, CustomerRow>;
  readonly #create: PreparedQuery<CustomerValues & CustomerKey, CustomerRow>;
  readonly #update: PreparedByShape<WriteShape, WriteParams, CustomerRow>;
  readonly #delete: PreparedByShape<boolean, WriteParams, { id: string }>;

  constructor(private readonly db: Db) {
    this.#find = new PreparedQuery(db, (p) =>
      db.selectFrom('customers').select(CUSTOMER_COLUMNS).where('tenantId', '=', p.tenantId).where('id', '=', p.id),
    );
    this.#create = new PreparedQuery(db, (p) =>
      db
        .insertInto('customers')
        .values({
          name: p.name,
          email: p.email,
          firstName: p.firstName,
          lastName: p.lastName,
          phone: p.phone,
          status: p.status,
          type: p.type,
          value: p.value,
          autoPayment: p.autoPayment,
          notes: p.notes,
          id: p.id,
          tenantId: p.tenantId,
        })
        .returning(CUSTOMER_COLUMNS),
    );
    this.#update = new PreparedByShape<WriteShape, WriteParams, CustomerRow>(
      db,
      (shape) => `${writeShapeKey(shape)}|${shape.nameFromParts}`,
      (shape, p) => {
        const changes: Record<string, unknown> = {
          ...Object.fromEntries(shape.columns.map((column) => [column, p[column]])),
          updatedAt: sql<Date>`clock_timestamp()`,
          version: sql<number>`version + 1`,
        };
        if (shape.nameFromParts) {
          const first = shape.columns.includes('firstName') ? sql`${p.firstName}::text` : sql.ref('firstName');
          const last = shape.columns.includes('lastName') ? sql`${p.lastName}::text` : sql.ref('lastName');
          // Both parts cleared leave the name as it was: a name cannot be cleared.
          changes.name = sql`coalesce(nullif(left(concat_ws(' ', ${first}, ${last}), 200), ''), ${sql.ref('name')})`;
        }
        // Locked before updatedAt is taken: see LeadRepository.
        const query = db
          .with('locked', (locked) =>
            locked
              .selectFrom('customers')
              .select('id as lockedId')
              .where('tenantId', '=', p.tenantId)
              .where('id', '=', p.id)
              .forUpdate(),
          )
          .updateTable('customers')
          .from('locked')
          .set(changes)
          .whereRef('customers.id', '=', 'locked.lockedId');
        return (shape.conditional ? query.where(versionIn(p.versions)) : query).returning(CUSTOMER_COLUMNS);
      },
    );
    this.#delete = new PreparedByShape(db, String, (conditional, p) => {
      const query = db.deleteFrom('customers').where('tenantId', '=', p.tenantId).where('id', '=', p.id);
      return (conditional ? query.where(versionIn(p.versions)) : query).returning('id');
    });
  }

  /** The one place lists are queried: filters, then a keyset page (SPEC §6). */
  list(tenantId: string, filters: CustomerFilters, page: KeysetPage<Customer>): Promise<CustomerListRow[]> {
    const query = this.db.selectFrom('customers').select(LIST_COLUMNS).where('tenantId', '=', tenantId);
    return rowsAsNamed<CustomerListRow>(this.db, keysetPage(applyCustomerFilters(query, filters), page));
  }

  find(tenantId: string, id: string): Promise<CustomerRow | undefined> {
    return this.#find.first({ tenantId, id });
  }

  create(tenantId: string, values: CustomerValues): Promise<CustomerRow> {
    return this.#mapEmailConflict(
      tenantId,
      values.email,
      () => this.#create.first({ ...values, id: newId(), tenantId }) as Promise<CustomerRow>,
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
    const { nameFromParts = false, ...values } = patch;
    const columns = Object.keys(values) as (keyof CustomerValues)[];
    const statement = this.#update.for({ columns, nameFromParts, conditional: expected !== undefined });
    return this.#mapEmailConflict(tenantId, values.email, () =>
      conditionalWrite(
        expected,
        () => statement.first({ ...values, tenantId, id, versions: expected }),
        () => this.#exists(tenantId, id),
      ),
    );
  }

  /** Deletes in one statement, the If-Match condition included; false when the customer is not in the tenant. */
  async delete(tenantId: string, id: string, expected?: ExpectedVersions): Promise<boolean> {
    const statement = this.#delete.for(expected !== undefined);
    const deleted = await conditionalWrite(
      expected,
      () => statement.first({ tenantId, id, versions: expected }),
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
