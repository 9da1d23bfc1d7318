import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'mismatch' }
  | { kind: 'in-progress' }
  | { kind: 'replay'; response: StoredResponse };

/** A record older than this is gone (SPEC §7: 24 hours). */
const RETENTION = sql`interval '24 hours'`;
/**
 * A request still "running" after this long died with its process: another may take the key over.
 * It is far above any request's life (FUNIL_REQUEST_TIMEOUT_MS answers by 4 s; statements time out after 3 s by default).
 */
const ABANDONED_AFTER = sql`interval '2 minutes'`;

/** Idempotency records, per tenant. The primary key (tenant, key) makes one request the owner. */
export class IdempotencyRepository {
  constructor(private readonly db: Db) {}

  /** Claims `key` for a request, or says why not; repeats at most once after clearing an expired record. */
  async claim(tenantId: string, key: string, requestHash: string): Promise<ClaimResult> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const inserted = await this.db
        .insertInto('idempotencyKeys')
        .values({ tenantId, key, requestHash, state: 'running' })
        .onConflict((oc) => oc.columns(['tenantId', 'key']).doNothing())
        .returning('key')
        .executeTakeFirst();
      if (inserted) return { kind: 'claimed' };

      const existing = await this.db
        .selectFrom('idempotencyKeys')
        .select([
          'requestHash',
          'state',
          'responseStatus',
          'responseHeaders',
          'responseBody',
          sql<boolean>`created_at < now() - ${RETENTION}`.as('expired'),
          sql<boolean>`started_at < now() - ${ABANDONED_AFTER}`.as('abandoned'),
        ])
        .where('tenantId', '=', tenantId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!existing) continue;
      if (existing.expired) {
        await this.#deleteIfExpired(tenantId, key);
        continue;
      }
      if (existing.requestHash !== requestHash) return { kind: 'mismatch' };
      if (existing.state === 'done') {
        return {
          kind: 'replay',
          response: {
            status: existing.responseStatus as number,
            headers: existing.responseHeaders ?? {},
            body: existing.responseBody as string,
          },
        };
      }
      return existing.abandoned && (await this.#takeOver(tenantId, key))
        ? { kind: 'claimed' }
        : { kind: 'in-progress' };
    }
    return { kind: 'in-progress' };
  }

  async complete(tenantId: string, key: string, response: StoredResponse): Promise<void> {
    await this.db
      .updateTable('idempotencyKeys')
      .set({
        state: 'done',
        responseStatus: response.status,
        responseHeaders: JSON.stringify(response.headers),
        responseBody: response.body,
      })
      .where('tenantId', '=', tenantId)
      .where('key', '=', key)
      .execute();
  }

  /** Forgets a claim whose request failed on the server's side, so that a retry may run it. */
  async release(tenantId: string, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotencyKeys')
      .where('tenantId', '=', tenantId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .execute();
  }

  /** Deletes every record past its 24 hours; returns how many. */
  async purgeExpired(): Promise<number> {
    const result = await this.db
      .deleteFrom('idempotencyKeys')
      .where(sql<boolean>`created_at < now() - ${RETENTION}`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async #deleteIfExpired(tenantId: string, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotencyKeys')
      .where('tenantId', '=', tenantId)
      .where('key', '=', key)
      .where(sql<boolean>`created_at < now() - ${RETENTION}`)
      .execute();
  }

  async #takeOver(tenantId: string, key: string): Promise<boolean> {
    const row = await this.db
      .updateTable('idempotencyKeys')
      .set({ startedAt: sql<Date>`now()` })
      .where('tenantId', '=', tenantId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .where(sql<boolean>`started_at < now() - ${ABANDONED_AFTER}`)
      .returning('key')
      .executeTakeFirst();
    return row !== undefined;
  }
}
