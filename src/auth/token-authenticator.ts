import { LRUCache } from 'lru-cache';
import type { WaitBudget } from '../db/connection-wait.js';
import type { Db } from '../db/database.js';
import { forbidden } from '../shared/errors.js';
import { authMessages } from './auth.messages.js';
import type { Principal } from './caller.js';
import type { PresentedToken } from './presented-token.js';
import { lackingScopes, type ScopeRule } from './scopes.js';
import type { TokenRepository } from './token.repository.js';

/** A request's way to the database (http/database-wait.ts): its handle, and its budget's line to set. */
export interface RequestDatabase {
  readonly db: Db;
  readonly waitBudget: WaitBudget;
}

interface TokenRecord extends Principal {
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly tenantActive: boolean;
}

interface Lookup {
  readonly record: TokenRecord;
  /** `performance.now()` of the lookup: a monotonic clock, which no step of the wall clock moves. */
  loadedAt: number;
}

/**
 * How long a token lookup is reused. Revocation is immediate on the instance that revokes
 * (it marks every lookup stale) and takes at most this long elsewhere (SPEC §5.4: within 5 s).
 */
const CACHE_TTL_MS = 2_000;
const LAST_USED_GRANULARITY_MS = 60_000;

export interface TokenCacheSizes {
  /** Tokens that exist, with what their last lookup said. Evicted one at a time, least recently used first. */
  readonly knownTokens: number;
  /** Hashes that named no token: kept apart, so that a flood of made-up tokens never pushes real ones out. */
  readonly unknownTokens: number;
}

const DEFAULT_SIZES: TokenCacheSizes = { knownTokens: 10_000, unknownTokens: 1_000 };

export class TokenAuthenticator {
  readonly #tokens: TokenRepository;
  readonly #known: LRUCache<string, Lookup>;
  readonly #unknown: LRUCache<string, number>;
  readonly #lastUsedWrites: LRUCache<string, number>;
  /** Counts invalidations: a lookup that began before one does not fill the cache. */
  #generation = 0;

  constructor(tokens: TokenRepository, sizes: TokenCacheSizes = DEFAULT_SIZES) {
    this.#tokens = tokens;
    this.#known = new LRUCache({ max: sizes.knownTokens });
    this.#unknown = new LRUCache({ max: sizes.unknownTokens });
    this.#lastUsedWrites = new LRUCache({ max: sizes.knownTokens });
  }

  /**
   * Resolves a bearer token to its principal or throws the 403 that names the cause. A lookup in
   * the database goes through `request`'s handle, within its budget; without one, the
   * authenticator's own.
   */
  async authenticate(
    presented: PresentedToken,
    required: ScopeRule | undefined,
    request?: RequestDatabase,
  ): Promise<Principal> {
    if (presented.token === undefined) throw forbidden(authMessages.tokenMissing);
    if (presented.hash === undefined) throw forbidden(authMessages.tokenInvalid);
    const record = await this.#lookup(presented.hash, request);
    if (record === null) throw forbidden(authMessages.tokenInvalid);
    if (record.revokedAt !== null) throw forbidden(authMessages.tokenRevoked);
    if (isExpired(record)) throw forbidden(authMessages.tokenExpired);
    if (!record.tenantActive) throw forbidden(authMessages.tenantInactive);
    const requiredScope = lackingScopes(required, record.scopes);
    if (requiredScope !== undefined) {
      throw forbidden(authMessages.scopeLacking(requiredScope));
    }
    this.#touch(record.tokenId);
    return record;
  }

  /**
   * Whether this hash named a usable token when last looked up, however long ago, without a
   * database lookup: the rate limit counts such a request against the token, any other against
   * its client address (SPEC §10).
   */
  knowsValid(hash: string): boolean {
    const record = this.#known.peek(hash)?.record;
    return record !== undefined && record.revokedAt === null && record.tenantActive && !isExpired(record);
  }

  /** Makes every cached lookup stale; called when a token or a tenant changes on this instance. */
  invalidate(): void {
    this.#generation++;
    for (const lookup of this.#known.values()) lookup.loadedAt = Number.NEGATIVE_INFINITY;
    this.#unknown.clear();
  }

  async #lookup(hash: string, request: RequestDatabase | undefined): Promise<TokenRecord | null> {
    const now = performance.now();
    const known = this.#known.get(hash);
    if (known && now - known.loadedAt < CACHE_TTL_MS) return known.record;
    const unknownAt = this.#unknown.get(hash);
    if (unknownAt !== undefined && now - unknownAt < CACHE_TTL_MS) return null;
    // A token the cache knew is its tenant's work; a new one waits in a line of its own, so that a
    // tenant's lookups never queue behind another's (db/connection-queue.ts).
    if (request) request.waitBudget.party = known?.record.tenantId ?? `token ${hash}`;
    const generation = this.#generation;
    const row = await this.#tokens.findByHash(hash, request?.db);
    // A token or tenant changed on this instance meanwhile: this answer may predate it.
    const current = generation === this.#generation;
    if (!row) {
      if (current) {
        this.#known.delete(hash);
        this.#unknown.set(hash, now);
      }
      return null;
    }
    const record: TokenRecord = {
      tokenId: row.id,
      tenantId: row.tenantId,
      scopes: new Set(row.scopes),
      expiresAt: row.expiresAt,
      revokedAt: row.revokedAt,
      tenantActive: row.active,
    };
    if (current) this.#known.set(hash, { record, loadedAt: now });
    return record;
  }

  /** Records `lastUsedAt` at most once a minute per token, off the request's path. */
  #touch(tokenId: string): void {
    const now = performance.now();
    const last = this.#lastUsedWrites.get(tokenId);
    if (last !== undefined && now - last < LAST_USED_GRANULARITY_MS) return;
    this.#lastUsedWrites.set(tokenId, now);
    this.#tokens.touch(tokenId).catch(() => this.#lastUsedWrites.delete(tokenId));
  }
}

/** Expiry is a moment in calendar time, so it is the one comparison made with the wall clock. */
function isExpired(record: TokenRecord): boolean {
  return record.expiresAt !== null && record.expiresAt.getTime() <= Date.now();
}
