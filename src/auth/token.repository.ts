import type { RawBuilder, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { ApiTokenTable } from '../db/tables.js';
import { newId } from '../shared/ids.js';

export type TokenRow = Omit<Selectable<ApiTokenTable>, 'tokenHash'>;

/**
 * SQL: whether the token `tokenId` names (a token of `tenantId`) still holds, neither revoked nor
 * expired; null when there is no such token. For what a token started and goes on doing in its
 * name (a webhook subscription, an import).
 */
export function tokenHolds(tokenId: RawBuilder<unknown>, tenantId: RawBuilder<unknown>): RawBuilder<boolean | null> {
  return sql<boolean | null>`(select k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
    from api_tokens k where k.id = ${tokenId} and k.tenant_id = ${tenantId})`;
}

/** Never the hash: it stays in the database. */
const TOKEN_COLUMNS = [
  'id',
  'tenantId',
  'name',
  'prefix',
  'scopes',
  'expiresAt',
  'revokedAt',
  'lastUsedAt',
  'createdAt',
] as const;

export interface NewToken {
  tenantId: string;
  name: string;
  scopes: string[];
  expiresAt: Date | null;
  tokenHash: string;
  prefix: string;
}

/** What authentication reads of a token, by its hash, with its tenant's state. */
export interface TokenByHash {
  readonly id: string;
  readonly tenantId: string;
  readonly scopes: string[];
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly active: boolean;
}

/** The one home of the `api_tokens` statements: issuing, listing and revoking (admin), finding by hash (auth). */
export class TokenRepository {
  constructor(private readonly db: Db) {}

  /** The token whose SHA-256 is `hash`, and whether its tenant is active; on `handle` (a request's, or `db`). */
  findByHash(hash: string, handle: Db = this.db): Promise<TokenByHash | undefined> {
    return handle
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
  }

  /** Notes that the token was used now. */
  async touch(id: string): Promise<void> {
    await this.db.updateTable('apiTokens').set({ lastUsedAt: new Date() }).where('id', '=', id).execute();
  }

  listForTenant(tenantId: string): Promise<TokenRow[]> {
    return this.db
      .selectFrom('apiTokens')
      .select(TOKEN_COLUMNS)
      .where('tenantId', '=', tenantId)
      .orderBy('createdAt')
      .orderBy('id')
      .execute();
  }

  create(token: NewToken): Promise<TokenRow> {
    return this.db
      .insertInto('apiTokens')
      .values({ ...token, id: newId() })
      .returning(TOKEN_COLUMNS)
      .executeTakeFirstOrThrow();
  }

  /** Revokes once: a second revocation keeps the first time. Undefined when the token is unknown. */
  revoke(id: string): Promise<TokenRow | undefined> {
    return this.db
      .updateTable('apiTokens')
      .set({ revokedAt: sql<Date>`coalesce(revoked_at, now())` })
      .where('id', '=', id)
      .returning(TOKEN_COLUMNS)
      .executeTakeFirst();
  }
}
