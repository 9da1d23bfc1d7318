import { setTimeout } from 'node:timers/promises';
import type { Change } from '../auth/caller.js';
import type { Db } from '../db/database.js';
import { inTransaction, lockKey } from '../db/transaction.js';
import { conflict, notFound, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages, messages } from '../shared/messages.js';
import { customFieldMessages, customFieldPhrases } from './custom-field.messages.js';
import type { CustomFieldRepository, DefinitionChanges } from './custom-field.repository.js';
import type { CustomFieldCreate, CustomFieldUpdate } from './custom-field.schemas.js';
import type { CustomFieldCatalog } from './custom-field-catalog.js';
import type { CustomFieldDefinition } from './custom-field-set.js';
import { CHOICE_TYPES, CUSTOM_LIMITS, type CustomFieldType, type CustomResource } from './custom-field-types.js';
import type { CustomValueRemoval } from './custom-value-removal.js';

/**
 * SPEC §16's definitions: at most 100 per resource and tenant, keys unique per resource, a type
 * that never changes, options only for choices. Every change drops this instance's copy of the
 * tenant's fields (CustomFieldCatalog) once it is committed. Each call runs on the `handle` it is
 * given: a request's (http/database-wait.ts).
 */
export class CustomFieldService {
  constructor(
    private readonly repository: CustomFieldRepository,
    private readonly catalog: CustomFieldCatalog,
    private readonly removal: CustomValueRemoval,
    /** How long a DELETE waits for the removal of the field's values before it answers (the rest goes on after). */
    private readonly removalWaitMs: number,
  ) {}

  list(handle: Db, tenantId: string, resource?: CustomResource): Promise<CustomFieldDefinition[]> {
    return this.repository.list(handle, tenantId, resource);
  }

  /** The JSON Schema of `custom` on `resource` for the tenant, as its writes are checked against it. */
  async jsonSchema(handle: Db, tenantId: string, resource: CustomResource): Promise<Record<string, unknown>> {
    return (await this.catalog.of(handle, tenantId, resource)).jsonSchema();
  }

  async find(handle: Db, tenantId: string, resource: CustomResource, key: string): Promise<CustomFieldDefinition> {
    const found = await this.repository.find(handle, tenantId, resource, key);
    if (!found) throw notFound(customFieldMessages.fieldNotFound);
    return found;
  }

  async create(handle: Db, tenantId: string, input: CustomFieldCreate): Promise<CustomFieldDefinition> {
    const { resource, key, type } = input;
    const options = checkedOptions(type, input.options ?? null);
    if (options === null && CHOICE_TYPES.includes(type)) {
      throw validationFailed([
        { field: 'options', message: fieldMessage('options', customFieldPhrases.optionsNeeded()) },
      ]);
    }
    const created = await inTransaction(handle, async (trx) => {
      // Creations of one tenant's fields of a resource take turns: the limit holds under concurrency.
      await lockKey(trx, `${tenantId}|custom-fields|${resource}`);
      if (await this.repository.removing(trx, tenantId, resource, key)) {
        void this.removal.start(tenantId, resource, key);
        throw conflict(customFieldMessages.stillRemoving(key));
      }
      if (await this.repository.find(trx, tenantId, resource, key)) throw conflict(customFieldMessages.keyTaken(key));
      if ((await this.repository.count(trx, tenantId, resource)) >= CUSTOM_LIMITS.fieldsPerResource) {
        throw conflict(customFieldMessages.tooMany(CUSTOM_LIMITS.fieldsPerResource));
      }
      return this.repository.insert(trx, tenantId, {
        resource,
        key,
        label: input.label,
        type,
        options,
        required: input.required ?? false,
      });
    });
    this.catalog.forget(tenantId, resource);
    return created;
  }

  async update(
    handle: Db,
    tenantId: string,
    resource: CustomResource,
    key: string,
    input: CustomFieldUpdate,
  ): Promise<CustomFieldDefinition> {
    const current = await this.find(handle, tenantId, resource, key);
    if (input.type !== undefined && input.type !== current.type) {
      throw validationFailed([
        { field: 'type', message: fieldMessage('type', customFieldPhrases.typeFixed(current.type)) },
      ]);
    }
    const changes: DefinitionChanges = {};
    if (input.label !== undefined) changes.label = input.label;
    if (input.required !== undefined) changes.required = input.required;
    // Options a choice must keep; other types take none (null, as they read it back, changes nothing).
    const options = input.options === undefined ? undefined : checkedOptions(current.type, input.options);
    if (options !== undefined && CHOICE_TYPES.includes(current.type)) {
      if (options === null) {
        throw validationFailed([
          { field: 'options', message: fieldMessage('options', customFieldPhrases.optionsNeeded()) },
        ]);
      }
      changes.options = options;
    }
    if (Object.keys(changes).length === 0) throw validationFailed([], messages.emptyUpdate);
    const updated = await this.repository.update(handle, tenantId, resource, key, changes);
    if (!updated) throw notFound(customFieldMessages.fieldNotFound);
    this.catalog.forget(tenantId, resource);
    return updated;
  }

  /**
   * Deletes the definition, then removes its values from the tenant's records: the answer waits
   * for that a moment (`removalWaitMs`), which is all it takes for most tenants; on a large one the
   * rest goes on in steps after the answer, and resumes after a restart.
   */
  async delete(handle: Db, actor: Change & { tenantId: string }, resource: CustomResource, key: string): Promise<void> {
    const { tenantId } = actor;
    const deleted = await inTransaction(handle, (trx) => this.repository.delete(trx, actor, resource, key));
    if (!deleted) throw notFound(customFieldMessages.fieldNotFound);
    this.catalog.forget(tenantId, resource);
    const removed = this.removal.start(tenantId, resource, key);
    const waiting = new AbortController();
    await Promise.race([
      removed,
      setTimeout(this.removalWaitMs, undefined, { signal: waiting.signal }).catch(() => {}),
    ]);
    waiting.abort();
  }
}

/** The options of a field of `type`: for a choice, distinct ones; for any other type, none at all. */
function checkedOptions(type: CustomFieldType, options: readonly string[] | null): readonly string[] | null {
  if (options === null) return null;
  if (!CHOICE_TYPES.includes(type)) {
    throw validationFailed([
      { field: 'options', message: fieldMessage('options', customFieldPhrases.optionsOnlyForChoices()) },
    ]);
  }
  // The schema trims each option; two that differ only in spaces are the same option.
  if (new Set(options).size !== options.length) {
    throw validationFailed([{ field: 'options', message: fieldMessage('options', fieldMessages.uniqueItems()) }]);
  }
  return options;
}
