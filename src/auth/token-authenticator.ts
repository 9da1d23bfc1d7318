import type { Db } from '../db/database.js';
import { forbidden } from '../shared/errors.js';
import { authMessages } from './auth.messages.js';
import type { PresentedToken } from './presented-token.js';
import type { Scope } from './scopes.js';

export interface Principal {
  readonly tokenId: string;
  readonly tenantId: string;
  readonly scopes: ReadonlySet<string>;
}

interface TokenRecord extends Principal {
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly tenantActive: boolean;
}

/**
 * How long a token lookup is reused. Revocation is immediate on the instance that revokes
 * (it clears the cache) and takes at most this long elsewhere (SPEC §5.4: within 5 s).
 */
const CACHE_TTL_MS = 2_000;
const CACHE_MAX_ENTRIES = 10_000;
const LAST_USED_GRANULARITY_MS = 60_000;

export class TokenAuthenticator {
  readonly #db: Db;
  readonly #cache = new Map<string, { record: TokenRecord | null; loadedAt: number }>();
  readonly #lastUsedWrites = new Map<string, number>();

  constructor(db: Db) {
    this.#db = db;
  }

  /** Resolves a bearer token to its principal or throws the 403 that names the cause. */
  async authenticate(presented: PresentedToken, requiredScope: Scope | undefined): Promise<Principal> {
    if (presented.token === undefined) throw forbidden(authMessages.tokenMissing);
    if (presented.hash === undefined) throw forbidden(authMessages.tokenInvalid);
    const record = await this.#lookup(presented.hash);
    if (record === null) throw forbidden(authMessages.tokenInvalid);
    if (record.revokedAt !== null) throw forbidden(authMessages.tokenRevoked);
    if (record.expiresAt !== null && record.expiresAt.getTime() <= Date.now()) {
      throw forbidden(authMessages.tokenExpired);
    }
    if (!record.tenantActive) throw forbidden(authMessages.tenantInactive);
    if (requiredScope !== undefined && !record.scopes.has(requiredScope)) {
      throw forbidden({
        pt: `O token não tem o escopo necessário: ${requiredScope}.`,
        en: `The token lacks the required scope: ${requiredScope}.`,
      });
    }
    this.#touch(record.tokenId);
    return record;
  }

  /** Forgets every cached lookup; called when a token or a tenant changes on this instance. */
  invalidate(): void {
    this.#cache.clear();
  }

  async #lookup(hash: string): Promise<TokenRecord | null> {
    const now = Date.now();
    const cached = this.#cache.get(hash);
    if (cached && now - cached.loadedAt < CACHE_TTL_MS) return cached.record;
    const row = await this.#db
      .selectFrom('apiTokens')
      .innerJoin('tenants', 'tenants.id', 'apiTokens.tenantId')
      .select([
        'apiTokens.id',
        'apiTokens.tenantId',
        'apiTokens.scopes',
        'apiTokens.expiresAt',
        'apiTokens.revokedAt',
        'tenants.active',
      ])
      .where('apiTokens.tokenHash', '=', hash)
      .executeTakeFirst();
    const record: TokenRecord | null = row
      ? {
          tokenId: row.id,
          tenantId: row.tenantId,
          scopes: new Set(row.scopes),
          expiresAt: row.expiresAt,
          revokedAt: row.revokedAt,
          tenantActive: row.active,
        }
      : null;
    if (this.#cache.size >= CACHE_MAX_ENTRIES) this.#cache.clear();
    this.#cache.set(hash, { record, loadedAt: now });
    return record;
  }

  /** Records `lastUsedAt` at most once a minute per token, off the request's path. */
  #touch(tokenId: string): void {
    const now = Date.now();
    const last = this.#lastUsedWrites.get(tokenId) ?? 0;
    if (now - last < LAST_USED_GRANULARITY_MS) return;
    if (this.#lastUsedWrites.size >= CACHE_MAX_ENTRIES) this.#lastUsedWrites.clear();
    this.#lastUsedWrites.set(tokenId, now);
    this.#db
      .updateTable('apiTokens')
      .set({ lastUsedAt: new Date(now) })
      .where('id', '=', tokenId)
      .execute()
      .catch(() => this.#lastUsedWrites.delete(tokenId));
  }
}
