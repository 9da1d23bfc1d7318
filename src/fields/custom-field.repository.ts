import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { toIso } from '../db/timestamp-text.js';
import { lockKey } from '../db/transaction.js';
import type { CustomFieldDefinition } from './custom-field-set.js';
import type { CustomFieldType, CustomResource } from './custom-field-types.js';

const COLUMNS = ['resource', 'key', 'label', 'type', 'options', 'required', 'createdAt', 'updatedAt'] as const;

interface DefinitionRow {
  resource: CustomResource;
  key: string;
  label: string;
  type: string;
  options: string[] | null;
  required: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export type DefinitionChanges = { -readonly [K in 'label' | 'options' | 'required']?: CustomFieldDefinition[K] };

/** The field definitions of each tenant (SPEC §16): every statement takes the tenant first. */
export class CustomFieldRepository {
  /** A tenant's definitions, of one resource or of both, oldest first. */
  async list(handle: Db, tenantId: string, resource?: CustomResource): Promise<CustomFieldDefinition[]> {
    let query = handle.selectFrom('customFields').select(COLUMNS).where('tenantId', '=', tenantId);
    if (resource) query = query.where('resource', '=', resource);
    const rows = await query.orderBy('resource', 'desc').orderBy('createdAt').orderBy('key').execute();
    return rows.map(toDefinition);
  }

  async find(
    handle: Db,
    tenantId: string,
    resource: CustomResource,
    key: string,
  ): Promise<CustomFieldDefinition | undefined> {
    const row = await handle
      .selectFrom('customFields')
      .select(COLUMNS)
      .where('tenantId', '=', tenantId)
      .where('resource', '=', resource)
      .where('key', '=', key)
      .executeTakeFirst();
    return row && toDefinition(row);
  }

  async count(handle: Db, tenantId: string, resource: CustomResource): Promise<number> {
    const row = await handle
      .selectFrom('customFields')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('tenantId', '=', tenantId)
      .where('resource', '=', resource)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async insert(
    handle: Db,
    tenantId: string,
    definition: Omit<CustomFieldDefinition, 'createdAt' | 'updatedAt'>,
  ): Promise<CustomFieldDefinition> {
    const row = await handle
      .insertInto('customFields')
      .values({ tenantId, ...definition, options: definition.options && [...definition.options] })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    return toDefinition(row);
  }

  async update(
    handle: Db,
    tenantId: string,
    resource: CustomResource,
    key: string,
    changes: DefinitionChanges,
  ): Promise<CustomFieldDefinition | undefined> {
    const { options, ...rest } = changes;
    const row = await handle
      .updateTable('customFields')
      .set({ ...rest, ...(options && { options: [...options] }), updatedAt: sql`now()` })
      .where('tenantId', '=', tenantId)
      .where('resource', '=', resource)
      .where('key', '=', key)
      .returning(COLUMNS)
      .executeTakeFirst();
    return row && toDefinition(row);
  }

  /**
   * Deletes a definition and records that its values are to be removed (by whom, for the events
   * of the removal), in the transaction `trx`; false when there was none. First it waits for the
   * writes in flight that set the field: they hold its lock shared until they commit (the trigger
   * of migration 2026-11-25T1000); from this commit on, the database refuses the field's values.
   */
  async delete(
    trx: Db,
    change: { tenantId: string; tokenId?: string | null; requestId?: string | null },
    resource: CustomResource,
    key: string,
  ): Promise<boolean> {
    const { tenantId } = change;
    await lockKey(trx, fieldLockName(tenantId, resource, key));
    const deleted = await trx
      .deleteFrom('customFields')
      .where('tenantId', '=', tenantId)
      .where('resource', '=', resource)
      .where('key', '=', key)
      .returning('key')
      .executeTakeFirst();
    if (!deleted) return false;
    await trx
      .insertInto('customFieldRemovals')
      .values({ tenantId, resource, key, tokenId: change.tokenId ?? null, requestId: change.requestId ?? null })
      .onConflict((oc) => oc.columns(['tenantId', 'resource', 'key']).doNothing())
      .execute();
    return true;
  }

  /** Whether the values of a deleted field of this key are still being removed. */
  async removing(handle: Db, tenantId: string, resource: CustomResource, key: string): Promise<boolean> {
    const row = await handle
      .selectFrom('customFieldRemovals')
      .select('key')
      .where('tenantId', '=', tenantId)
      .where('resource', '=', resource)
      .where('key', '=', key)
      .executeTakeFirst();
    return row !== undefined;
  }
}

/** The lock of one field: writes that set it hold it shared, a deletion exclusively (the same text as the trigger's). */
function fieldLockName(tenantId: string, resource: CustomResource, key: string): string {
  return `${tenantId}|custom-field|${resource}|${key}`;
}

function toDefinition(row: DefinitionRow): CustomFieldDefinition {
  return {
    resource: row.resource,
    key: row.key,
    label: row.label,
    type: row.type as CustomFieldType,
    options: row.options,
    required: row.required,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  };
}
