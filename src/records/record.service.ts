import type { Db } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import type { KeysetPage, ListedRows } from '../db/keyset.js';
import { PreconditionFailedError } from '../db/precondition.js';
import type { RecordStore, StoredRow, WriteOptions } from '../db/record-store.js';
import { conflict, notFound, preconditionFailed, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages, messages, type Text } from '../shared/messages.js';
import type { FieldTable, RecordObject, recordFields } from './record-fields.js';

/** A field unique per tenant (SPEC §4, §13), and what a clash on it answers. */
export interface UniqueField {
  readonly field: string;
  readonly column: string;
  /** The unique index that refuses the clash. */
  readonly constraint: string;
  readonly text: Text;
  /** Only a caller with this scope learns the holder's id (SPEC §2). */
  readonly readScope: string;
}

/** Who makes a change: the token, and the tenant it belongs to. */
export interface Actor {
  readonly tenantId: string;
  readonly tokenId: string;
}

/** A record as the API shows it, and its version (the ETag, SPEC §8). */
export interface Stored<T> {
  readonly object: T;
  readonly version: number;
}

type Fields<F extends FieldTable, L extends readonly (keyof F & string)[]> = ReturnType<typeof recordFields<F, L>>;

/**
 * The write path every resource shares (SPEC §2–§8): a record of another tenant is a 404, an
 * If-Match that does not match is a 412, a constraint the database refuses is the SPEC §2 error a
 * resource names for it. Each method runs on the handle it is given (the database, or a
 * transaction spanning several writes). Resources add their own rules in create and update.
 */
export abstract class RecordService<F extends FieldTable, L extends readonly (keyof F & string)[]> {
  constructor(
    protected readonly store: RecordStore,
    protected readonly fields: Fields<F, L>,
    private readonly notFoundText: Text,
    /** The statuses a record may take (FUNIL_LEAD_STATUSES for leads, SPEC §3 and §4). */
    private readonly statuses: readonly string[],
    /** The fields unique per tenant: the index that says so, the 409's text, the scope that may learn the holder. */
    private readonly uniqueFields: readonly UniqueField[],
  ) {}

  async find(handle: Db, tenantId: string, id: string): Promise<Stored<RecordObject<F>>> {
    const row = await this.store.find(handle, tenantId, id);
    if (!row) throw notFound(this.notFoundText);
    return this.stored(row);
  }

  async list<Item>(
    handle: Db,
    tenantId: string,
    filters: object,
    page: KeysetPage<Item>,
  ): Promise<ListedRows<ReturnType<Fields<F, L>['toListItem']>>> {
    const { rows, resumeAfter } = await this.store.list(handle, tenantId, this.fields.listSelection, filters, page);
    return {
      items: rows.map((row) => this.fields.toListItem(row)),
      resumeAfter: resumeAfter && this.fields.toListItem(resumeAfter),
    };
  }

  setStatus(
    handle: Db,
    tenantId: string,
    id: string,
    status: string,
    expected?: WriteOptions['expected'],
  ): Promise<Stored<RecordObject<F>>> {
    return this.write(handle, tenantId, id, { status }, { expected });
  }

  async delete(handle: Db, tenantId: string, id: string, expected?: WriteOptions['expected']): Promise<void> {
    const deleted = await this.store.delete(handle, tenantId, id, expected).catch((error: unknown) => {
      throw preconditionAsApiError(error);
    });
    if (!deleted) throw notFound(this.notFoundText);
  }

  /** The writable fields of an update body; none at all is a 400 (SPEC §3). */
  protected changesOf(input: Readonly<Record<string, unknown>>) {
    const changes = this.fields.writableOf(input);
    if (Object.keys(changes).length === 0) throw validationFailed([], messages.emptyUpdate);
    return changes;
  }

  protected async insert(
    handle: Db,
    tenantId: string,
    values: Readonly<Record<string, unknown>>,
  ): Promise<Stored<RecordObject<F>>> {
    this.#checkStatus(values);
    try {
      return this.stored(await this.store.insert(handle, tenantId, this.fields.toColumns(values)));
    } catch (error) {
      throw await this.constraintError(error, handle, tenantId, values);
    }
  }

  protected async write(
    handle: Db,
    tenantId: string,
    id: string,
    values: Readonly<Record<string, unknown>>,
    options: WriteOptions,
  ): Promise<Stored<RecordObject<F>>> {
    this.#checkStatus(values);
    let row: StoredRow | undefined;
    try {
      row = await this.store.update(handle, tenantId, id, this.fields.toColumns(values), options);
    } catch (error) {
      throw await this.constraintError(preconditionAsApiError(error), handle, tenantId, values);
    }
    if (!row) throw notFound(this.notFoundText);
    return this.stored(row);
  }

  /**
   * The SPEC §2 error for a constraint the database refused a write for: a unique field another
   * record holds is a 409 naming that record, to a caller who may read it (SPEC §2, §4, §13).
   * Resources add their own (a lead left without contact); any other error comes back as it came.
   */
  protected async constraintError(
    error: unknown,
    handle: Db,
    tenantId: string,
    values: Readonly<Record<string, unknown>>,
  ): Promise<unknown> {
    const taken = this.uniqueFields.find((unique) => isUniqueViolation(error, unique.constraint));
    if (!taken || values[taken.field] == null) return error;
    const existingId = await this.store.findIdBy(handle, tenantId, taken.column, values[taken.field]);
    return conflict(taken.text, existingId ? { existingId } : undefined, taken.readScope);
  }

  /**
   * The route's schema already refuses another status; this keeps the rule with the write for every
   * other caller (a batch item, a conversion, an assistant's tool call).
   */
  #checkStatus(values: Readonly<Record<string, unknown>>): void {
    if (values.status === undefined || this.statuses.includes(values.status as string)) return;
    throw validationFailed([{ field: 'status', message: fieldMessage('status', fieldMessages.oneOf(this.statuses)) }]);
  }

  private stored(row: StoredRow): Stored<RecordObject<F>> {
    return { object: this.fields.toObject(row), version: row.version };
  }
}

function preconditionAsApiError(error: unknown): unknown {
  return error instanceof PreconditionFailedError ? preconditionFailed() : error;
}
