import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { nextRowsNewestFirst } from '../db/tenant-walk.js';
import { BackgroundRuns } from '../shared/background-runs.js';
import type { CustomResource } from './custom-field-types.js';

/** Rows read per step: each step is one short transaction, so writers of those rows wait little. */
const BATCH_ROWS = 1000;

const TABLES: Readonly<Record<CustomResource, 'leads' | 'customers'>> = { lead: 'leads', customer: 'customers' };

type Step = 'more' | 'done' | 'busy';

/** How long a removal that failed (the database away, say) waits before it tries again. */
const RETRY_MS = 10_000;

/**
 * SPEC §16: after a definition is deleted, its values leave every record of the tenant. The
 * tenant's rows are walked newest first, a batch per transaction, and the position reached is
 * kept with the pending removal: a removal cut short (a crash, a shutdown) goes on from there the
 * next time it runs. Records created meanwhile cannot hold the key (the database refuses values
 * of undefined fields), so the walk misses none. One runner at a time per removal: a step locks
 * the pending removal, and a runner that finds it locked leaves it to the one that holds it.
 *
 * Each record that loses a value changes like any other (SPEC §14): a new version and
 * `updatedAt`, and a `<family>.updated` event naming `custom.<key>`, made by the token that
 * deleted the field, in the step's own statement.
 */
export class CustomValueRemoval {
  readonly #runs: BackgroundRuns;

  constructor(
    private readonly db: Db,
    log: FastifyBaseLogger,
  ) {
    this.#runs = new BackgroundRuns(log, 'custom field values: removal', RETRY_MS);
  }

  /**
   * Removes the values of the deleted field `key`; resolves when none is left, when another runner
   * has them, or when a step failed (it is tried again later).
   */
  start(tenantId: string, resource: CustomResource, key: string): Promise<void> {
    return this.#runs.start({ tenantId, resource, key }, () => this.#run(tenantId, resource, key));
  }

  /** Runs every removal left pending (by an instance that stopped mid-way), one after the other. */
  async resumeAll(): Promise<void> {
    const pending = await this.db.selectFrom('customFieldRemovals').select(['tenantId', 'resource', 'key']).execute();
    for (const { tenantId, resource, key } of pending) {
      if (this.#runs.stopping) return;
      await this.start(tenantId, resource, key);
    }
  }

  /** Stops after the steps under way: what is left resumes at the next start. */
  stop(): Promise<void> {
    return this.#runs.stop();
  }

  async #run(tenantId: string, resource: CustomResource, key: string): Promise<void> {
    while (!this.#runs.stopping && (await this.#step(tenantId, resource, key)) === 'more') {
      // Between steps, other work of the event loop and of the database goes first.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #step(tenantId: string, resource: CustomResource, key: string): Promise<Step> {
    const table = sql.table(TABLES[resource]);
    const removal = sql`tenant_id = ${tenantId} and resource = ${resource} and key = ${key}`;
    return this.db.transaction().execute(async (trx) => {
      const { rows: pending } = await sql<{
        afterCreatedAt: Date | null;
        afterId: string | null;
        tokenId: string | null;
        requestId: string | null;
      }>`
        select after_created_at, after_id, token_id, request_id from custom_field_removals where ${removal}
        for update skip locked`.execute(trx);
      const position = pending[0];
      if (!position) return 'busy';
      const rows = await nextRowsNewestFirst(trx, TABLES[resource], tenantId, position, BATCH_ROWS);
      if (rows.length > 0) {
        await sql`
          with locked as (
            select id as locked_id, custom as old_custom from ${table}
            where tenant_id = ${tenantId} and id = any (${rows.map((row) => row.id)}::uuid[])
              and custom ? ${key}::text
            for update
          ), written as (
            update ${table} set custom = custom - ${key}::text, updated_at = clock_timestamp(), version = version + 1
            from locked where ${table}.id = locked.locked_id
            returning ${table}.*
          )
          insert into events (tenant_id, type, object_id, token_id, request_id, object, previous)
          select w.tenant_id, ${`${resource}.updated`}, w.id, ${position.tokenId}::uuid, ${position.requestId}::text,
            to_jsonb(w), jsonb_build_object('custom', l.old_custom)
          from written as w join locked as l on l.locked_id = w.id`.execute(trx);
      }
      const last = rows.at(-1);
      if (rows.length < BATCH_ROWS || !last) {
        await sql`delete from custom_field_removals where ${removal}`.execute(trx);
        return 'done';
      }
      await sql`
        update custom_field_removals set after_created_at = ${last.createdAt}, after_id = ${last.id}::uuid
        where ${removal}`.execute(trx);
      return 'more';
    });
  }
}
