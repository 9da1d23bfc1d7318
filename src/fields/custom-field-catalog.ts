import { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.js';
import type { CustomFieldRepository } from './custom-field.repository.js';
import { CustomFieldSet } from './custom-field-set.js';
import type { CustomResource } from './custom-field-types.js';

/**
 * How long another instance may go on with definitions it read before a change (SPEC §5.4 gives
 * token revocation the same bound). What must hold even then — each stored value belongs to a
 * defined field, with its JSON type — the database checks on every write.
 */
const CACHE_TTL_MS = 5_000;

/** One resource's fields of each tenant, as a write or a list reads them. */
export interface ResourceCustomFields {
  /** `fresh`: read from the database, whatever this instance knows. */
  of(handle: Db, tenantId: string, fresh?: boolean): Promise<CustomFieldSet>;
  /** Drops what is known of a tenant's fields: the next read asks the database. */
  forget(tenantId: string): void;
}

/**
 * Each tenant's field definitions, read once and kept a few seconds: a write needs them to
 * check its values, and reading them on every write would double its round trips. This
 * instance's own changes drop them at once.
 */
export class CustomFieldCatalog {
  readonly #sets = new LRUCache<string, CustomFieldSet>({ max: 20_000, ttl: CACHE_TTL_MS, ttlAutopurge: false });
  /** Bumped by each forget, so that a read that began before a change does not store what it read. */
  readonly #generations = new LRUCache<string, number>({ max: 20_000 });

  constructor(private readonly repository: CustomFieldRepository) {}

  async of(handle: Db, tenantId: string, resource: CustomResource, fresh = false): Promise<CustomFieldSet> {
    const name = `${tenantId}|${resource}`;
    if (fresh) this.forget(tenantId, resource);
    const known = this.#sets.get(name);
    if (known) return known;
    const generation = this.#generations.get(name);
    const set = new CustomFieldSet(resource, await this.repository.list(handle, tenantId, resource));
    if (this.#generations.get(name) === generation) this.#sets.set(name, set);
    return set;
  }

  forget(tenantId: string, resource: CustomResource): void {
    const name = `${tenantId}|${resource}`;
    this.#sets.delete(name);
    this.#generations.set(name, (this.#generations.get(name) ?? 0) + 1);
  }

  forResource(resource: CustomResource): ResourceCustomFields {
    return {
      of: (handle, tenantId, fresh) => this.of(handle, tenantId, resource, fresh),
      forget: (tenantId) => this.forget(tenantId, resource),
    };
  }
}
