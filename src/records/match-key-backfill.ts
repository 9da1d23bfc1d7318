import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { isLockNotAvailable } from '../db/errors.js';
import { BackgroundRuns } from '../shared/background-runs.js';
import { matchEmail, matchPhone } from '../shared/match-keys.js';
import type { MatchKeyRules } from './match-key-rules.js';

/** Rows read per step: each step is one short transaction, so writers of those rows wait little. */
const BATCH_ROWS = 1000;
const RETRY_MS = 10_000;
/** How long a step that gave way to a writer waits before it tries again. */
const GIVE_WAY_MS = 100;

type Table = 'leads' | 'customers';

/**
 * SPEC §21: the records written before matching keys existed get theirs (migration
 * 2026-11-28T1100), a batch of rows per transaction in id order, the position kept in
 * `match_key_backfills` (a restart goes on from there; the row is deleted at the end). A row is
 * given the keys of the e-mail and phone it was read with, only if it still holds them: a write
 * meanwhile has set its own. The keys are not the record's data: no version, no `updatedAt`, no
 * event.
 */
export class MatchKeyBackfill {
  readonly #runs: BackgroundRuns;

  constructor(
    private readonly db: Db,
    log: FastifyBaseLogger,
    private readonly matchKeys: MatchKeyRules,
  ) {
    this.#runs = new BackgroundRuns(log, 'matching keys: backfill', RETRY_MS);
  }

  /** Runs the backfill of each table that has one left, one after the other. */
  async resumeAll(): Promise<void> {
    const pending = await this.db.selectFrom('matchKeyBackfills').select('tableName').orderBy('tableName').execute();
    for (const { tableName } of pending) {
      if (this.#runs.stopping) return;
      await this.#runs.start({ table: tableName }, () => this.#run(tableName));
    }
  }

  stop(): Promise<void> {
    return this.#runs.stop();
  }

  async #run(table: Table): Promise<void> {
    while (!this.#runs.stopping) {
      const outcome = await this.#step(table).catch((error: unknown) => {
        if (isLockNotAvailable(error)) return 'gave way' as const;
        throw error;
      });
      if (outcome === 'done' || outcome === 'busy') return;
      if (outcome === 'gave way') await sleep(GIVE_WAY_MS);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #step(table: Table): Promise<'more' | 'done' | 'busy'> {
    return this.db.transaction().execute(async (trx) => {
      // A row a writer holds makes the step give way at once, rather than wait: two writers that
      // each wait for the other's rows are a deadlock, and PostgreSQL might end the writer's.
      await sql`set local lock_timeout = '50ms'`.execute(trx);
      const { rows: positions } = await sql<{ afterId: string | null }>`
        select after_id from match_key_backfills where table_name = ${table} for update skip locked`.execute(trx);
      const position = positions[0];
      if (!position) return 'busy';
      const after = position.afterId === null ? sql`` : sql`where id > ${position.afterId}::uuid`;
      const { rows } = await sql<{ id: string; tenantId: string; email: string | null; phone: string | null }>`
        select id, tenant_id, email, phone from ${sql.table(table)} ${after} order by id limit ${BATCH_ROWS}`.execute(
        trx,
      );
      const keyed = [];
      for (const row of rows) {
        const country = row.phone ? await this.matchKeys.countryOf(trx, row.tenantId) : '';
        keyed.push({
          id: row.id,
          email: row.email,
          phone: row.phone,
          match_email: matchEmail(row.email),
          match_phone: row.phone ? matchPhone(row.phone, country) : null,
        });
      }
      if (keyed.length > 0) {
        await sql`
          update ${sql.table(table)} as r set match_email = k.match_email, match_phone = k.match_phone
          from jsonb_to_recordset(${JSON.stringify(keyed)}::jsonb)
            as k (id uuid, email text, phone text, match_email text, match_phone text)
          where r.id = k.id and r.email is not distinct from k.email and r.phone is not distinct from k.phone
            and (r.match_email, r.match_phone) is distinct from (k.match_email, k.match_phone)`.execute(trx);
      }
      const last = rows.at(-1);
      if (rows.length < BATCH_ROWS || !last) {
        await sql`delete from match_key_backfills where table_name = ${table}`.execute(trx);
        return 'done';
      }
      await sql`update match_key_backfills set after_id = ${last.id}::uuid where table_name = ${table}`.execute(trx);
      return 'more';
    });
  }
}
