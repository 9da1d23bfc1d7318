import { createHash } from 'node:crypto';
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

/**
 * What makes two requests with one key "the same" (SPEC §7): the route they went to (REST: method
 * and path with query; MCP: the tool) and their validated body.
 */
export function requestFingerprint(route: string, body: unknown): string {
  return createHash('sha256')
    .update(`${route}\n`)
    .update(JSON.stringify(body ?? null))
    .digest('hex');
}

/** Whose key it is: a key belongs to the token that sent it (SPEC §7), inside its tenant. */
export interface KeyOwner {
  readonly tenantId: string;
  readonly tokenId: string;
  readonly key: string;
}

/**
 * Idempotency records, per token. The primary key (tenant, token, key) makes one request the owner.
 * A claim runs on the request's handle; recording its outcome is bookkeeping, on `db`, outside the
 * request's budget for waiting on connections: a request that spent it must still record its
 * outcome, or its key would stay "running" until taken over as abandoned.
 */
export class IdempotencyRepository {
  constructor(private readonly db: Db) {}

  /**
   * Claims a key for a request, or says why not; repeats at most once after clearing an expired record.
   *
   * An upload read as a stream (an import's file) is claimed before its bytes are read: its
   * `requestHash` is then all that is known before (route, media type), which a record still
   * running holds too; the record of one that ended holds its bytes' fingerprint as well (`complete`),
   * so it is compared with `upload.fingerprint()`, which reads this request's bytes.
   */
  async claim(
    handle: Db,
    owner: KeyOwner,
    requestHash: string,
    upload?: { fingerprint(): Promise<string> },
  ): Promise<ClaimResult> {
    const { tenantId, tokenId, key } = owner;
    for (let attempt = 0; attempt < 2; attempt++) {
      const inserted = await handle
        .insertInto('idempotencyKeys')
        .values({ tenantId, tokenId, key, requestHash, state: 'running' })
        .onConflict((oc) => oc.columns(['tenantId', 'tokenId', 'key']).doNothing())
        .returning('key')
        .executeTakeFirst();
      if (inserted) return { kind: 'claimed' };

      const existing = await handle
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
        .where((eb) => eb.and(keyOf(owner)))
        .executeTakeFirst();
      if (!existing) continue;
      if (existing.expired) {
        await this.#deleteIfExpired(handle, owner);
        continue;
      }
      const settled = existing.state === 'done';
      const sameRequest =
        settled && upload
          ? (await upload.fingerprint()) === existing.requestHash
          : existing.requestHash === requestHash;
      if (!sameRequest) return { kind: 'mismatch' };
      if (settled) {
        return {
          kind: 'replay',
          response: {
            status: existing.responseStatus as number,
            headers: existing.responseHeaders ?? {},
            body: existing.responseBody as string,
          },
        };
      }
      return existing.abandoned && (await this.#takeOver(handle, owner))
        ? { kind: 'claimed' }
        : { kind: 'in-progress' };
    }
    return { kind: 'in-progress' };
  }

  /** Records the answer; `requestHash`, the request's full fingerprint when the claim had not all of it (an upload's bytes). */
  async complete(owner: KeyOwner, response: StoredResponse, requestHash?: string): Promise<void> {
    await this.db
      .updateTable('idempotencyKeys')
      .set({
        ...(requestHash === undefined ? {} : { requestHash }),
        state: 'done',
        responseStatus: response.status,
        responseHeaders: JSON.stringify(response.headers),
        responseBody: response.body,
      })
      .where((eb) => eb.and(keyOf(owner)))
      .execute();
  }

  /** Forgets a claim whose request failed on the server's side, so that a retry may run it. */
  async release(owner: KeyOwner): Promise<void> {
    await this.db
      .deleteFrom('idempotencyKeys')
      .where((eb) => eb.and(keyOf(owner)))
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

  /**
   * Forgets the tenant's kept answers that show any of `texts` (a record's id, an e-mail): a
   * replay would show a person erased since (SPEC §17).
   */
  async forgetShowing(handle: Db, tenantId: string, texts: readonly string[]): Promise<void> {
    await sql`
      delete from idempotency_keys
      where tenant_id = ${tenantId}
        and exists (select 1 from unnest(${texts}::text[]) as text where strpos(response_body, text) > 0)`.execute(
      handle,
    );
  }

  async #deleteIfExpired(handle: Db, owner: KeyOwner): Promise<void> {
    await handle
      .deleteFrom('idempotencyKeys')
      .where((eb) => eb.and(keyOf(owner)))
      .where(sql<boolean>`created_at < now() - ${RETENTION}`)
      .execute();
  }

  async #takeOver(handle: Db, owner: KeyOwner): Promise<boolean> {
    const row = await handle
      .updateTable('idempotencyKeys')
      .set({ startedAt: sql<Date>`now()` })
      .where((eb) => eb.and(keyOf(owner)))
      .where('state', '=', 'running')
      .where(sql<boolean>`started_at < now() - ${ABANDONED_AFTER}`)
      .returning('key')
      .executeTakeFirst();
    return row !== undefined;
  }
}

/** The primary key of an owner's record, as a filter (a copy: a caller's object may carry more). */
function keyOf({ tenantId, tokenId, key }: KeyOwner): KeyOwner {
  return { tenantId, tokenId, key };
}
