import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { ApiTokenTable } from '../db/tables.js';
import { newId } from '../shared/ids.js';

export type TokenRow = Omit<Selectable<ApiTokenTable>, 'tokenHash'>;

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

export class TokenRepository {
  constructor(private readonly db: Db) {}

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
