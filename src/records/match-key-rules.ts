import { LRUCache } from 'lru-cache';
import { phoneCountryOf } from '../admin/tenant.repository.js';
import type { Db } from '../db/database.js';
import { DEFAULT_PHONE_COUNTRY, matchEmail, matchPhone } from '../shared/match-keys.js';

/** How long an instance reads a tenant's phones in the country it knew, after an admin changed it. */
const COUNTRY_TTL_MS = 5_000;

/** The columns that hold a record's matching keys (migration 2026-11-28T1100). */
export const MATCH_KEY_COLUMNS = ['matchEmail', 'matchPhone'] as const;

/**
 * SPEC §21: every write of a lead or customer keeps its matching keys beside the values they come
 * from: the normalised e-mail, and the phone in E.164 read in the tenant's country (kept a few
 * seconds per instance, so a write adds no query).
 */
export class MatchKeyRules {
  readonly #countries = new LRUCache<string, string>({ max: 20_000, ttl: COUNTRY_TTL_MS, ttlAutopurge: false });

  /** `values` with the keys of the e-mail and the phone they set (both, on a create: `creating`). */
  async keyed(
    handle: Db,
    tenantId: string,
    values: Readonly<Record<string, unknown>>,
    creating: boolean,
  ): Promise<Record<string, unknown>> {
    const keys: Record<string, unknown> = {};
    if (creating || 'email' in values) keys.matchEmail = matchEmail(values.email as string | null | undefined);
    if (creating || 'phone' in values) {
      const phone = values.phone as string | null | undefined;
      keys.matchPhone = phone ? matchPhone(phone, await this.countryOf(handle, tenantId)) : null;
    }
    return { ...values, ...keys };
  }

  async countryOf(handle: Db, tenantId: string): Promise<string> {
    let country = this.#countries.get(tenantId);
    if (country === undefined) {
      country = (await phoneCountryOf(handle, tenantId)) ?? DEFAULT_PHONE_COUNTRY;
      this.#countries.set(tenantId, country);
    }
    return country;
  }
}
