import type { Db } from '../db/database.js';
import type { ApiError } from '../shared/errors.js';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import type { StoredRow, WriteOptions } from './record-store.js';

/** An update's changes as a tenant's status rules place them, and what the store needs to write them so. */
export interface PlacedChanges {
  readonly changes: Readonly<Record<string, unknown>>;
  readonly options?: Pick<WriteOptions, 'derived' | 'params' | 'within'>;
}

/** The status rules of one tenant, read once for a write (or a batch of them). */
export interface StatusCheck {
  /** A create's values with the status (and what places it) filled in; throws the SPEC §2 400 of a status refused. */
  create(values: Readonly<Record<string, unknown>>): Record<string, unknown>;
  /** An update's changes as written; throws the 400 of a status no record may take. */
  update(changes: Readonly<Record<string, unknown>>): PlacedChanges;
  /** The 400 of an update the store's guard refused, for the record as it is. */
  refused(current: StoredRow): ApiError;
  /**
   * A row put back as it once was (a merge's undo), snake_case: undefined while its status is one
   * it may still take; else the row placed as it would be now (the first stage of its pipeline, or
   * of the default pipeline when its own is gone), and which field moved.
   */
  replaced?(
    row: Readonly<Record<string, unknown>>,
  ): { row: Record<string, unknown>; moved: 'pipeline' | 'status' } | undefined;
}

/**
 * Which statuses a record may take (SPEC §3, §4, §20), checked on every write path: a create, an
 * update, a status change, an upsert, a batch item, a conversion, an assistant's tool call. The
 * route's schema is not enough: those callers do not all pass through one.
 */
export interface StatusRules {
  /** `fresh`: read from the database, whatever this instance knows. */
  of(handle: Db, tenantId: string, fresh?: boolean): StatusCheck | Promise<StatusCheck>;
  /** Whether `error` is a refusal that rules read afresh might not make (the write is then tried again with them). */
  refuses?(error: unknown): boolean;
}

/** One list of statuses for every tenant (customers). */
export function fixedStatuses(statuses: readonly string[]): StatusRules {
  const check = (values: Readonly<Record<string, unknown>>) => {
    if (values.status !== undefined && !statuses.includes(values.status as string)) throw refused();
  };
  const refused = () =>
    validationFailed([{ field: 'status', message: fieldMessage('status', fieldMessages.oneOf(statuses)) }]);
  const rules: StatusCheck = {
    create: (values) => {
      check(values);
      return { ...values };
    },
    update: (changes) => {
      check(changes);
      return { changes };
    },
    refused,
  };
  return { of: () => rules };
}
