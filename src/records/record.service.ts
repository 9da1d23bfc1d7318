import type { Actor } from '../auth/caller.js';
import { codeNameOf, sqlNameOf } from '../db/column-names.js';
import type { Db } from '../db/database.js';
import {
  checkViolationColumn,
  isCheckViolation,
  isInvalidTextError,
  isRefusedData,
  isUniqueViolation,
} from '../db/errors.js';
import type { KeysetPage, ListedRows } from '../db/keyset.js';
import { PreconditionFailedError } from '../db/precondition.js';
import { inSavepoint, inTransaction, lockKey, lockKeys, retryingTransient } from '../db/transaction.js';
import { customFieldPhrases } from '../fields/custom-field.messages.js';
import type { ResourceCustomFields } from '../fields/custom-field-catalog.js';
import { type CustomFieldSet, CustomValuesRefused } from '../fields/custom-field-set.js';
import {
  ApiError,
  conflict,
  notFound,
  preconditionFailed,
  unstorableText,
  validationFailed,
} from '../shared/errors.js';
import { matchEmail, matchPhone } from '../shared/match-keys.js';
import { fieldMessage, fieldMessages, messages, type Text } from '../shared/messages.js';
import type { MatchKeyRules } from './match-key-rules.js';
import { checkMergeInput, type MergeInput, mergedValues } from './merge-plan.js';
import type { CreateInput, FieldTable, RecordObject, recordFields, UpdateInput } from './record-fields.js';
import { type MergeRow, RecordMergeStore, type RowSnapshot } from './record-merge.js';
import { GuardRefusedError, type RecordStore, type StoredRow, type WriteOptions } from './record-store.js';
import type { PlacedChanges, StatusCheck, StatusRules } from './status-rules.js';

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

/** The database's check that each custom value belongs to a defined field of its type (migration 2026-11-25T1000). */
const CUSTOM_VALUES_DEFINED = 'custom_values_defined';

/** How many times an upsert looks for its record when what it found changed under it. */
const UPSERT_ATTEMPTS = 3;
/** Creates of a batch checked between two turns of the event loop (~10 µs each). */
const PREPARE_SLICE = 50;

/** The fields an upsert may match on (SPEC §13). */
export const UPSERT_KEYS = ['email', 'externalId'] as const;
export type UpsertKey = (typeof UPSERT_KEYS)[number];

/** An upsert's outcome: the record, and whether it was created (201) or found (200). */
export interface Upserted<T> {
  readonly stored: Stored<T>;
  readonly created: boolean;
}

/** A record as the API shows it, and its version (the ETag, SPEC §8). */
export interface Stored<T> {
  readonly object: T;
  readonly version: number;
}

type Fields<F extends FieldTable, L extends readonly (keyof F & string)[]> = ReturnType<typeof recordFields<F, L>>;

export interface RecordServiceOptions<F extends FieldTable, L extends readonly (keyof F & string)[]> {
  readonly store: RecordStore;
  readonly fields: Fields<F, L>;
  /** The 404's text. */
  readonly notFoundText: Text;
  /** The statuses a record may take (SPEC §3, §4, §20). */
  readonly statusRules: StatusRules;
  /** The fields unique per tenant: the index that says so, the 409's text, the scope that may learn the holder. */
  readonly uniqueFields: readonly UniqueField[];
  /** The tenant's own fields of this resource (SPEC §16): `custom` is checked against them. */
  readonly customFields: ResourceCustomFields;
  /** The matching keys every write keeps (SPEC §21). */
  readonly matchKeys: MatchKeyRules;
  /**
   * What a merge chooses besides the writable fields (a lead's read-only `customerId`), and the
   * fields taken together from one record (a lead's pipeline and status) (SPEC §21).
   */
  readonly merging?: { readonly carried?: readonly string[]; readonly groups?: readonly (readonly string[])[] };
}

/** A merge done (or, with dryRun, as it would be): SPEC §21's answer, and the record's version (its ETag). */
export interface Merged<T> {
  readonly merge: { id: string | null; targetId: string; sourceIds: readonly string[]; createdAt: string | null };
  readonly record: Stored<T>;
}

/** What blocks an undo (SPEC §21): the record and field at stake, and why. */
export interface UndoBlocker {
  readonly recordId: string;
  readonly field: string;
  readonly reason: 'changed_since' | 'taken' | 'target_deleted' | 'pipeline_deleted' | 'stage_removed';
}

/** Thrown inside a dry run's transaction to roll it back with the answer it made. */
class DryRun<T> extends Error {
  constructor(readonly answer: T) {
    super('dry run');
  }
}

/**
 * The write path every resource shares (SPEC §2–§8): a record of another tenant is a 404, an
 * If-Match that does not match is a 412, a constraint the database refuses is the SPEC §2 error a
 * resource names for it. Each method runs on the handle it is given (the database, or a
 * transaction spanning several writes). Resources add their own rules in create and update.
 */
export abstract class RecordService<F extends FieldTable, L extends readonly (keyof F & string)[]> {
  protected readonly store: RecordStore;
  protected readonly fields: Fields<F, L>;
  protected readonly notFoundText: Text;
  protected readonly statusRules: StatusRules;
  readonly #uniqueFields: readonly UniqueField[];
  protected readonly customFields: ResourceCustomFields;
  readonly #matchKeys: MatchKeyRules;
  readonly #merging: NonNullable<RecordServiceOptions<F, L>['merging']>;
  readonly #merges: RecordMergeStore;

  constructor(options: RecordServiceOptions<F, L>) {
    this.store = options.store;
    this.fields = options.fields;
    this.notFoundText = options.notFoundText;
    this.statusRules = options.statusRules;
    this.#uniqueFields = options.uniqueFields;
    this.customFields = options.customFields;
    this.#matchKeys = options.matchKeys;
    this.#merging = options.merging ?? {};
    this.#merges = new RecordMergeStore(options.store.table as 'leads' | 'customers', options.store.family, ['custom']);
  }

  async find(handle: Db, tenantId: string, id: string): Promise<Stored<RecordObject<F>>> {
    const found = await this.lookup(handle, tenantId, id);
    if (!found) throw notFound(this.notFoundText);
    return found;
  }

  /** The record, or undefined when the tenant has none with this id. */
  async lookup(handle: Db, tenantId: string, id: string): Promise<Stored<RecordObject<F>> | undefined> {
    const row = await this.store.find(handle, tenantId, id);
    return row && this.stored(row);
  }

  /** The tenant's records of these ids, in the order of `ids`; ids it has none of are left out. */
  async lookupMany(handle: Db, tenantId: string, ids: readonly string[]): Promise<Stored<RecordObject<F>>[]> {
    const rows = new Map((await this.store.findMany(handle, tenantId, ids)).map((row) => [row.id, row]));
    return ids.flatMap((id) => {
      const row = rows.get(id);
      return row ? [this.stored(row)] : [];
    });
  }

  async list<Item>(
    handle: Db,
    tenantId: string,
    filters: object,
    page: KeysetPage<Item>,
  ): Promise<ListedRows<ReturnType<Fields<F, L>['toListItem']>>> {
    const { custom, ...others } = filters as { custom?: readonly [string, string][] };
    const resolved = custom
      ? {
          ...others,
          custom: await this.#withCustomFields(handle, tenantId, (fields) => fields.filter(new Map(custom))),
        }
      : others;
    const { rows, resumeAfter } = await this.store.list(handle, tenantId, resolved, page);
    return {
      items: rows.map((row) => this.fields.toListItem(row)),
      resumeAfter: resumeAfter && this.fields.toListItem(resumeAfter),
    };
  }

  setStatus(
    handle: Db,
    actor: Actor,
    id: string,
    status: string,
    expected?: WriteOptions['expected'],
  ): Promise<Stored<RecordObject<F>>> {
    return this.write(handle, actor, id, { status }, { expected });
  }

  async delete(handle: Db, actor: Actor, id: string, expected?: WriteOptions['expected']): Promise<void> {
    const deleted = await this.store.delete(handle, actor, id, expected).catch((error: unknown) => {
      throw preconditionAsApiError(error);
    });
    if (!deleted) throw notFound(this.notFoundText);
  }

  /**
   * SPEC §17: deletes the record on its person's request, with an erasure event that holds only
   * its id, in one transaction with the record locked; `redact` runs first in it (the record's
   * history, wherever it is kept). False when the tenant has no such record, or when it no longer
   * holds `email` (changed since it was found: it is someone else's now).
   */
  erase(handle: Db, actor: Actor, id: string, email: string, redact: (trx: Db) => Promise<void>): Promise<boolean> {
    return this.transaction(handle, async (trx) => {
      const row = await this.store.findForUpdate(trx, actor.tenantId, id);
      if (row?.email !== email) return false;
      await redact(trx);
      return this.store.erase(trx, actor, id);
    });
  }

  /** The writable fields of an update body; none at all is a 400 (SPEC §3). */
  protected changesOf(input: Readonly<Record<string, unknown>>) {
    const changes = this.fields.writableOf(input);
    if (Object.keys(changes).length === 0) throw validationFailed([], messages.emptyUpdate);
    return changes;
  }

  async create(handle: Db, actor: Actor, input: CreateInput<F>): Promise<Stored<RecordObject<F>>> {
    const values = await this.#withCustomFields(handle, actor.tenantId, (custom) =>
      this.#valuesOfCreate(actor, input, custom),
    );
    const checked = await this.#statusChecked(handle, actor.tenantId, (check) => check.create(values));
    return this.insert(handle, actor, await this.#matchKeys.keyed(handle, actor.tenantId, checked, true));
  }

  /** The values a create stores, defaults included; throws the SPEC §2 error of a rule the input breaks. */
  protected abstract createValues(actor: Actor, input: CreateInput<F>): Record<string, unknown>;

  /** The resource's values of a create, with its custom values checked against the tenant's fields. */
  #valuesOfCreate(actor: Actor, input: CreateInput<F>, custom: CustomFieldSet): Record<string, unknown> {
    const values = this.createValues(actor, input);
    const given = (input as { custom?: Readonly<Record<string, unknown>> | null }).custom;
    return { ...values, custom: custom.forCreate(given) };
  }

  abstract update(
    handle: Db,
    actor: Actor,
    id: string,
    input: UpdateInput<F>,
    expected?: WriteOptions['expected'],
  ): Promise<Stored<RecordObject<F>>>;

  /**
   * SPEC §13: the record whose `key` holds the body's value is updated with the fields the body
   * holds (`onExisting: 'keep'` leaves it as it is: a conversion links it); with none, it is
   * created. Writers of one key take turns on a lock held to the end of the transaction, so any
   * number of concurrent upserts of a new key create exactly one record, on every instance. A
   * plain create that takes a unique key in between (it does not take the lock) is found again
   * and updated.
   */
  async upsert(
    handle: Db,
    actor: Actor,
    key: UpsertKey,
    input: CreateInput<F>,
    onExisting: 'update' | 'keep' = 'update',
  ): Promise<Upserted<RecordObject<F>>> {
    const value = (input as Readonly<Record<string, unknown>>)[key];
    if (value == null || value === '') {
      throw validationFailed([{ field: key, message: fieldMessage(key, fieldMessages.upsertKey()) }]);
    }
    const { tenantId } = actor;
    // The body must be a valid create body (SPEC §13), whichever way it goes. A conversion's
    // (`keep`) is Funil's own: checked when it creates, not when it finds the record. Its status
    // only as any update's is (a status no pipeline has, a pipeline the tenant has not): which
    // pipeline it must be a stage of is known once the record is found — the record's own, as
    // PUT checks it (SPEC §20), or, when none is and it creates, the body's or the default.
    if (onExisting === 'update') {
      const values = await this.#withCustomFields(handle, tenantId, (custom) =>
        this.#valuesOfCreate(actor, input, custom),
      );
      await this.#statusChecked(handle, tenantId, (check) => check.update(values));
    }
    const unique = this.#uniqueFields.find((field) => field.field === key);
    // A create body is an update body that holds the required fields.
    const changes = input as unknown as UpdateInput<F>;
    return this.transaction(handle, async (trx) => {
      await lockKey(trx, this.#lockName(tenantId, key, value));
      // Deletes and plain creates do not take the key's lock: the record found may be gone when it
      // is written, and a create may take the key meanwhile. Either way, look again.
      for (let attempt = 1; ; attempt++) {
        const lastAttempt = attempt === UPSERT_ATTEMPTS;
        const id = await this.store.findIdBy(trx, tenantId, key, value);
        if (id) {
          try {
            const stored =
              onExisting === 'keep' ? await this.find(trx, tenantId, id) : await this.update(trx, actor, id, changes);
            return { stored, created: false };
          } catch (error) {
            if (lastAttempt || !(error instanceof ApiError && error.statusCode === 404)) throw error;
            continue;
          }
        }
        if (!unique) return { stored: await this.create(trx, actor, input), created: true };
        try {
          return { stored: await inSavepoint(trx, () => this.create(trx, actor, input)), created: true };
        } catch (error) {
          if (lastAttempt || !(error instanceof UniqueFieldClash && error.unique === unique)) throw error;
        }
      }
    });
  }

  /**
   * SPEC §13's batch: each input created (or upserted by `key`) in input order, in one transaction,
   * each in a savepoint of its own, so a failed item leaves no trace and the others go on (plain
   * creates first try one statement for all: #insertAll). An input that is an ApiError already
   * (its body was refused) is its own outcome. A failure that is not the item's (the database
   * away) fails the whole batch, which then wrote nothing.
   */
  async batch(
    handle: Db,
    actor: Actor,
    inputs: readonly (CreateInput<F> | ApiError)[],
    key?: UpsertKey,
  ): Promise<(Upserted<RecordObject<F>> | ApiError)[]> {
    const apply = async (trx: Db, input: CreateInput<F>): Promise<Upserted<RecordObject<F>>> =>
      key === undefined
        ? { stored: await this.create(trx, actor, input), created: true }
        : this.upsert(trx, actor, key, input);
    if (key === undefined) {
      const created = await this.#insertAll(handle, actor, inputs);
      if (created) return created;
    }
    return this.transaction(handle, async (trx) => {
      // Every key up front, in one order for all: two batches upserting overlapping keys in
      // different orders would otherwise each hold a key the other waits for.
      if (key !== undefined) {
        const values = inputs.flatMap((input) => (input instanceof ApiError ? [] : [input[key as keyof typeof input]]));
        const present = values.filter((value) => value != null && value !== '');
        await lockKeys(trx, [...new Set(present.map((value) => this.#lockName(actor.tenantId, key, value)))]);
      }
      const outcomes: (Upserted<RecordObject<F>> | ApiError)[] = [];
      for (const input of inputs) {
        if (input instanceof ApiError) {
          outcomes.push(input);
          continue;
        }
        try {
          outcomes.push(await inSavepoint(trx, () => apply(trx, input)));
        } catch (error) {
          outcomes.push(asItemFault(await withHolderNamed(error, trx), error));
        }
      }
      return outcomes;
    });
  }

  /**
   * A batch of creates, the fast way: every input's values as `create` makes them, then one
   * statement that inserts them all — atomic on its own, so no transaction is opened for it (in
   * one, it runs in a savepoint). When the database refuses it (one item's unique value, say),
   * nothing of it stays and the answer is undefined: the caller then applies the items one by
   * one, to learn which one failed.
   */
  async #insertAll(
    handle: Db,
    actor: Actor,
    inputs: readonly (CreateInput<F> | ApiError)[],
  ): Promise<(Upserted<RecordObject<F>> | ApiError)[] | undefined> {
    const country = await this.#matchKeys.countryOf(handle, actor.tenantId);
    const withKeys = (values: Record<string, unknown>) => ({
      ...values,
      matchEmail: matchEmail(values.email as string | null),
      matchPhone: matchPhone(values.phone as string | null, country),
    });
    const prepareOne = (input: CreateInput<F> | ApiError, custom: CustomFieldSet, check: StatusCheck) => {
      if (input instanceof ApiError) return input;
      try {
        return this.fields.toColumns(withKeys(check.create(this.#valuesOfCreate(actor, input, custom))));
      } catch (error) {
        if (error instanceof ApiError) return error;
        throw error;
      }
    };
    // A slice at a time, other work of the process between slices: a large batch (an import's
    // step) would otherwise hold the event loop for milliseconds, and every request with it.
    const prepare = async (custom: CustomFieldSet, check: StatusCheck) => {
      const prepared: (Record<string, unknown> | ApiError)[] = [];
      for (const [index, input] of inputs.entries()) {
        if (index > 0 && index % PREPARE_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
        prepared.push(prepareOne(input, custom, check));
      }
      return prepared;
    };
    // Values the copies of this instance refuse are checked again against the definitions read afresh.
    let custom = await this.customFields.of(handle, actor.tenantId);
    let check = await this.statusRules.of(handle, actor.tenantId);
    let prepared = await prepare(custom, check);
    if (prepared.some((item) => item instanceof CustomValuesRefused)) {
      custom = await this.customFields.of(handle, actor.tenantId, true);
      prepared = await prepare(custom, check);
    }
    if (prepared.some((item) => this.statusRules.refuses?.(item))) {
      check = await this.statusRules.of(handle, actor.tenantId, true);
      prepared = await prepare(custom, check);
    }
    const rows = prepared.filter((values): values is Record<string, unknown> => !(values instanceof ApiError));
    let inserted: StoredRow[];
    const insert = () => this.store.insertMany(handle, actor, rows);
    try {
      inserted = handle.isTransaction ? await inSavepoint(handle, insert) : await retryingTransient(insert);
    } catch (error) {
      if (isRefusedData(error)) return undefined;
      throw error;
    }
    let next = 0;
    return prepared.map((values) =>
      values instanceof ApiError ? values : { stored: this.stored(inserted[next++] as StoredRow), created: true },
    );
  }

  /** The fields a merge chooses a value for (`fields` of its body may name these, or `custom.<key>`). */
  get mergeFields(): readonly string[] {
    return [...(this.fields.writableKeys as string[]), ...(this.#merging.carried ?? [])];
  }

  /**
   * SPEC §21: in one transaction, with every record locked (in id order, so merges of overlapping
   * records take turns and one of them finds a record gone: 404), the target takes the merged
   * values with its `*.merged` event and the sources are deleted, each with its `*.deleted` event
   * (reason `merge`); the merge is kept for its undo. `dryRun` does all of it and rolls it back.
   */
  async merge(
    handle: Db,
    actor: Actor,
    input: MergeInput,
    expected?: WriteOptions['expected'],
  ): Promise<Merged<RecordObject<F>>> {
    checkMergeInput(input, this.mergeFields);
    const { tenantId } = actor;
    const work = async (trx: Db): Promise<Merged<RecordObject<F>>> => {
      const snapshots = await this.#merges.lock(trx, tenantId, [input.targetId, ...input.sourceIds]);
      const before = snapshots.get(input.targetId);
      if (!before || input.sourceIds.some((id) => !snapshots.has(id))) throw notFound(this.notFoundText);
      if (expected !== undefined && !expected.includes(Number(before.version))) throw preconditionFailed();
      const objects = new Map(
        (await this.lookupMany(trx, tenantId, [input.targetId, ...input.sourceIds])).map((stored) => [
          (stored.object as { _id: string })._id,
          stored.object as Readonly<Record<string, unknown>>,
        ]),
      );
      const merged = mergedValues(input, objects, this.mergeFields, this.#merging.groups ?? []);
      const placed = (await this.statusRules.of(trx, tenantId)).update(merged).changes;
      const keyed = await this.#matchKeys.keyed(trx, tenantId, placed, false);
      await this.#merges.deleteSources(trx, actor, input.sourceIds, input.targetId);
      let row: StoredRow;
      try {
        row = await this.#merges.writeTarget(trx, actor, input.targetId, this.fields.toColumns(keyed), input.sourceIds);
      } catch (error) {
        throw this.constraintError(error, tenantId, keyed);
      }
      const sources = input.sourceIds.map((id) => snapshots.get(id) as RowSnapshot);
      const kept = await this.#merges.recordMerge(trx, actor, {
        targetId: input.targetId,
        sourceIds: input.sourceIds,
        before,
        sources,
      });
      const answer = {
        merge: {
          id: kept.id,
          targetId: input.targetId,
          sourceIds: input.sourceIds,
          createdAt: kept.createdAt.toISOString(),
        },
        record: this.stored(row),
      };
      if (input.dryRun) throw new DryRun(answer);
      return answer;
    };
    try {
      // In a caller's transaction, a dry run rolls back to a savepoint of its own, not the caller's work.
      return handle.isTransaction
        ? await inSavepoint(handle, () => work(handle))
        : await this.transaction(handle, work);
    } catch (error) {
      if (!(error instanceof DryRun)) throw error;
      const { merge, record } = error.answer as Merged<RecordObject<F>>;
      return { merge: { ...merge, id: null, createdAt: null }, record };
    }
  }

  /**
   * SPEC §21's undo: the sources back as they were (their ids, values and createdAt), each with
   * its `*.created` event, and the target's fields the merge set back, with its event (reason
   * `unmerge`). What blocks it — a target changed since on a field the merge set, a source's unique
   * value now held by another record, a target deleted — is a 409 naming it, unless `force`, which
   * keeps those later values (a source then goes back without the value another record took).
   */
  async unmerge(handle: Db, actor: Actor, merge: MergeRow, force: boolean): Promise<void> {
    const { tenantId } = actor;
    await this.transaction(handle, async (trx) => {
      const current = await this.#merges.lock(trx, tenantId, [merge.targetId, ...merge.sourceIds]);
      const blockers: UndoBlocker[] = [];
      const target = current.get(merge.targetId);
      const revert: Record<string, unknown> = {};
      if (!target) {
        blockers.push({ recordId: merge.targetId, field: '_id', reason: 'target_deleted' });
      } else {
        for (const [column, after] of Object.entries(merge.targetAfter)) {
          if (column === 'updated_at' || column === 'version') continue;
          const beforeValue = merge.targetBefore[column];
          if (JSON.stringify(after) === JSON.stringify(beforeValue)) continue;
          if (JSON.stringify(target[column]) === JSON.stringify(after)) revert[column] = beforeValue;
          else if (!column.startsWith('match_')) {
            blockers.push({ recordId: merge.targetId, field: this.#fieldName(column), reason: 'changed_since' });
          }
        }
        // A unique value the target gave up in the merge, taken since by another record: the
        // target keeps its later value (with `force`), as a source goes back without one.
        for (const unique of this.#uniqueFields) {
          const column = sqlNameOf(unique.column);
          const value = revert[column];
          if (value == null) continue;
          const holder = await this.store.findIdBy(trx, tenantId, unique.column, value);
          if (holder && holder !== merge.targetId) {
            blockers.push({ recordId: merge.targetId, field: unique.field, reason: 'taken' });
            delete revert[column];
            delete revert[`match_${column}`];
          }
        }
      }
      const restored: RowSnapshot[] = [];
      // The pipelines as they are now (SPEC §20): one deleted, or a stage removed, since the merge.
      const check = await this.statusRules.of(trx, tenantId, true);
      for (const source of merge.sources) {
        let row: Record<string, unknown> = { ...source };
        const placed = check.replaced?.(row);
        if (placed) {
          const reason = placed.moved === 'pipeline' ? 'pipeline_deleted' : 'stage_removed';
          blockers.push({ recordId: source.id as string, field: placed.moved, reason });
          row = placed.row;
        }
        for (const unique of this.#uniqueFields) {
          const column = sqlNameOf(unique.column);
          const value = source[column];
          if (value == null) continue;
          const holder = await this.store.findIdBy(trx, tenantId, unique.column, value);
          const targetKeeps = target && (column in revert ? revert[column] : target[column]) === value;
          if (holder && (holder !== merge.targetId || targetKeeps)) {
            blockers.push({ recordId: source.id as string, field: unique.field, reason: 'taken' });
            row[column] = null;
          }
        }
        restored.push(row);
      }
      if (blockers.length > 0 && !force) throw undoBlocked(blockers);
      if (force && blockers.some((blocker) => blocker.reason === 'taken' && this.#required(blocker.field))) {
        throw undoBlocked(blockers);
      }
      if (target) await this.#merges.revertTarget(trx, actor, merge.targetId, revert);
      for (const row of restored) await this.#merges.restore(trx, actor, row);
    });
  }

  /**
   * SPEC §23's revert of an import, for one record it wrote: deleted (it `created` it) or given back
   * `columns` (its former values, snake_case, as the import's events keep them), if it is still at
   * the `version` the import left; otherwise left as it is. Each in a savepoint of the caller's
   * transaction: a former value another record took since (a unique e-mail) leaves this one as it is.
   */
  async revertImported(
    trx: Db,
    actor: Actor,
    record: { id: string; version: number; created: boolean; columns: RowSnapshot },
  ): Promise<'deleted' | 'restored' | 'gone' | 'changed' | 'taken'> {
    const current = (await this.#merges.lock(trx, actor.tenantId, [record.id])).get(record.id);
    if (!current) return 'gone';
    if (Number(current.version) !== record.version) return 'changed';
    try {
      return await inSavepoint(trx, async () => {
        if (record.created) {
          await this.delete(trx, actor, record.id);
          return 'deleted';
        }
        const columns = Object.fromEntries(
          Object.entries(record.columns).filter(([column]) => column !== 'updated_at' && column !== 'version'),
        );
        await this.#merges.revertTarget(trx, actor, record.id, columns, 'revert');
        return 'restored';
      });
    } catch (error) {
      if (isRefusedData(error)) return 'taken';
      throw error;
    }
  }

  /** The API field a column shows as (`external_id` → `externalId`). */
  #fieldName(column: string): string {
    return this.fields.fieldOf(codeNameOf(column))?.field ?? column;
  }

  /** A field no record may be without (a customer's e-mail): a source cannot go back without it. */
  #required(field: string): boolean {
    return (this.fields.requiredKeys as readonly string[]).includes(field) && field !== 'name';
  }

  /**
   * Runs `work` in a transaction (the caller's, or a new one); a clash on a unique field is named
   * (UniqueFieldClash) once a new transaction has rolled back.
   */
  protected async transaction<T>(handle: Db, work: (trx: Db) => Promise<T>): Promise<T> {
    try {
      return await inTransaction(handle, work);
    } catch (error) {
      throw handle.isTransaction ? error : await withHolderNamed(error, handle);
    }
  }

  protected async insert(
    handle: Db,
    actor: Actor,
    values: Readonly<Record<string, unknown>>,
  ): Promise<Stored<RecordObject<F>>> {
    try {
      return this.stored(await this.store.insert(handle, actor, this.fields.toColumns(values)));
    } catch (error) {
      throw await this.#settled(this.constraintError(error, actor.tenantId, values), handle);
    }
  }

  protected async write(
    handle: Db,
    actor: Actor,
    id: string,
    values: Readonly<Record<string, unknown>>,
    options: WriteOptions,
  ): Promise<Stored<RecordObject<F>>> {
    return this.#write(handle, actor, id, values, options, false);
  }

  /**
   * `write` with the status rules as this instance knows them (`fresh`: read afresh); a status
   * they refuse, in the body or by the store's guard, is tried once more with them read afresh:
   * another instance may have just added the stage (PipelineCatalog's copy lags by seconds).
   */
  async #write(
    handle: Db,
    actor: Actor,
    id: string,
    values: Readonly<Record<string, unknown>>,
    options: WriteOptions,
    fresh: boolean,
  ): Promise<Stored<RecordObject<F>>> {
    const check = await this.statusRules.of(handle, actor.tenantId, fresh);
    let placed: PlacedChanges;
    try {
      placed = check.update(values);
    } catch (error) {
      if (fresh || !this.statusRules.refuses?.(error)) throw error;
      return this.#write(handle, actor, id, values, options, true);
    }
    const patch = values.custom as Readonly<Record<string, unknown>> | undefined;
    const keyed = await this.#matchKeys.keyed(handle, actor.tenantId, placed.changes, false);
    const changes =
      patch === undefined
        ? keyed
        : {
            ...keyed,
            custom: await this.#withCustomFields(handle, actor.tenantId, (fields) => fields.forUpdate(patch)),
          };
    const derived = [...(options.derived ?? []), ...(placed.options?.derived ?? [])];
    const writeOptions = { ...options, ...placed.options, derived };
    let row: StoredRow | undefined;
    try {
      row = await this.store.update(handle, actor, id, this.fields.toColumns(changes), writeOptions);
    } catch (error) {
      if (error instanceof GuardRefusedError) {
        if (fresh) throw check.refused(error.current);
        return this.#write(handle, actor, id, values, options, true);
      }
      throw await this.#settled(this.constraintError(preconditionAsApiError(error), actor.tenantId, changes), handle);
    }
    if (!row) throw notFound(this.notFoundText);
    return this.stored(row);
  }

  /** `use` with the status rules as this instance knows them; when they refuse the status, with them read afresh. */
  async #statusChecked<T>(handle: Db, tenantId: string, use: (check: StatusCheck) => T): Promise<T> {
    try {
      return use(await this.statusRules.of(handle, tenantId));
    } catch (error) {
      if (!this.statusRules.refuses?.(error)) throw error;
      return use(await this.statusRules.of(handle, tenantId, true));
    }
  }

  /**
   * `use` with the tenant's fields as this instance knows them; when they refuse a value, with
   * the fields read again first: another instance may have just defined the field or its option
   * (this one's copy lags by up to a few seconds, CustomFieldCatalog).
   */
  async #withCustomFields<T>(handle: Db, tenantId: string, use: (fields: CustomFieldSet) => T): Promise<T> {
    try {
      return use(await this.customFields.of(handle, tenantId));
    } catch (error) {
      if (!(error instanceof CustomValuesRefused)) throw error;
      return use(await this.customFields.of(handle, tenantId, true));
    }
  }

  /** The name of the lock writers of one upsert key take turns on: tenant, resource, field, value. */
  #lockName(tenantId: string, key: UpsertKey, value: unknown): string {
    return [tenantId, this.store.table, key, value].join('|');
  }

  /**
   * The SPEC §2 error for a constraint the database refused a write for: a unique field another
   * record holds is a 409 (UniqueFieldClash). Resources add their own (a lead left without
   * contact); any other error comes back as it came.
   */
  protected constraintError(error: unknown, tenantId: string, values: Readonly<Record<string, unknown>>): unknown {
    if (isCheckViolation(error, CUSTOM_VALUES_DEFINED)) {
      // Definitions changed since this instance read them (another instance's change): read them again next time.
      this.customFields.forget(tenantId);
      const field = `custom.${checkViolationColumn(error) ?? ''}`;
      return validationFailed([{ field, message: fieldMessage(field, customFieldPhrases.notDefinedNow()) }]);
    }
    const unique = this.#uniqueFields.find((field) => isUniqueViolation(error, field.constraint));
    if (!unique || values[unique.field] == null) return error;
    const value = values[unique.field];
    return new UniqueFieldClash(unique, (handle) => this.store.findIdBy(handle, tenantId, unique.column, value));
  }

  /** A statement that failed in a transaction leaves it unusable: its clash is named once it rolled back. */
  async #settled(error: unknown, handle: Db): Promise<unknown> {
    return handle.isTransaction ? error : withHolderNamed(error, handle);
  }

  protected stored(row: StoredRow): Stored<RecordObject<F>> {
    return { object: this.fields.toObject(row), version: row.version };
  }
}

/**
 * A 409 on a field unique per tenant (SPEC §2, §4, §13). Its holder is looked up apart: after a
 * failed statement a transaction answers nothing until it (or a savepoint) rolls back, so whoever
 * ran it there names the holder afterwards (withHolderNamed). Unnamed, it is still the 409.
 */
export class UniqueFieldClash extends ApiError {
  constructor(
    readonly unique: UniqueField,
    /** The id of the record that holds the value, read on a handle that can answer. */
    readonly holder: (handle: Db) => Promise<string | undefined>,
  ) {
    super({ statusCode: 409, code: 'conflict', text: unique.text, extraScope: unique.readScope });
  }
}

/** The 409 of a UniqueFieldClash with `existingId` (to a caller who may read it); any other error as it is. */
export async function withHolderNamed(error: unknown, handle: Db): Promise<unknown> {
  if (!(error instanceof UniqueFieldClash)) return error;
  const existingId = await error.holder(handle);
  return conflict(error.unique.text, {
    extra: existingId ? { existingId } : undefined,
    readScope: error.unique.readScope,
  });
}

/** An item's own failure as its SPEC §2 error; any other failure is rethrown, to fail the whole batch. */
function asItemFault(refused: unknown, original: unknown): ApiError {
  if (refused instanceof ApiError && refused.statusCode < 500) return refused;
  if (isInvalidTextError(refused)) return unstorableText();
  throw original;
}

function preconditionAsApiError(error: unknown): unknown {
  return error instanceof PreconditionFailedError ? preconditionFailed() : error;
}

const undoTexts = {
  blocked: (what: string) => ({
    pt: `A mescla não pode ser desfeita sem perder alterações posteriores: ${what}. Use ?force=true para mantê-las.`,
    en: `The merge cannot be undone without losing later changes: ${what}. Send ?force=true to keep them.`,
  }),
};

/** The 409 of an undo that would lose later changes, each named in `blockers`. */
function undoBlocked(blockers: readonly UndoBlocker[]): ApiError {
  const what = blockers.map((blocker) => `${blocker.recordId} ${blocker.field} (${blocker.reason})`).join('; ');
  return conflict(undoTexts.blocked(what), { extra: { blockers } });
}
