import { sql } from 'kysely';
import { tokenHolds } from '../auth/token.repository.js';
import type { Db } from '../db/database.js';
import { JOB_EVENT_TYPES } from '../events/change-events.js';
import type { Position } from '../events/event.repository.js';
import { FAMILY_OF_KIND } from '../events/event.service.js';
import type { EventFilter } from '../events/event-filter.schemas.js';
import { newId } from '../shared/ids.js';
import { CLAIM_SECONDS } from './attempt-queue.js';

/** A subscription as stored (migration 2026-11-24T1500-webhooks); secrets sealed (SecretBox). */
export interface SubscriptionRow {
  readonly id: string;
  readonly tenantId: string;
  readonly url: string;
  readonly description: string | null;
  readonly eventTypes: readonly string[];
  /** The event families its creating token could read (SPEC §15): all it may ever receive. */
  readonly families: readonly string[];
  /** Which of its events it delivers (SPEC §22), as the API took it; null: all. */
  readonly filter: EventFilter | null;
  readonly active: boolean;
  readonly disabledReason: string | null;
  readonly secret: string;
  /** Secrets replaced by a rotation, each still signing until its `until` (ISO text). */
  readonly previousSecrets: readonly PreviousSecret[];
  readonly createdBy: string | null;
  readonly failingSince: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface DeliveryRow {
  readonly id: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: string;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly tries: number;
  readonly nextAttemptAt: Date | null;
  readonly lastAttemptAt: Date | null;
  readonly lastHttpStatus: number | null;
  readonly lastError: string | null;
  readonly lastDurationMs: number | null;
  readonly lastResponse: string | null;
  readonly createdAt: Date;
}

export interface PreviousSecret {
  readonly secret: string;
  readonly until: string;
}

export interface AttemptRow {
  readonly deliveryId: string;
  readonly try: number;
  readonly attemptedAt: Date;
  readonly httpStatus: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly response: string | null;
}

/** A delivery claimed for an attempt, with what the attempt needs of its subscription. */
export interface ClaimedDelivery extends DeliveryRow {
  readonly url: string;
  readonly active: boolean;
  /** Whether the subscription's tenant is active: nothing is attempted for an inactive one (SPEC §15). */
  readonly tenantActive: boolean;
  /** Whether the token that created the subscription is still neither revoked nor expired. */
  readonly ownerValid: boolean;
  /** Whether the subscription's deliveries were failing when the attempt was claimed (`failing_since`). */
  readonly subscriptionFailing: boolean;
  readonly secret: string;
  readonly previousSecrets: readonly PreviousSecret[];
}

/** An attempt as the queue hands it over: which delivery, which try, and the job making it. */
export interface AttemptClaim {
  readonly tenantId: string;
  readonly deliveryId: string;
  readonly attempt: number;
  readonly jobId: string;
}

export interface NewDelivery {
  readonly tenantId: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: string;
  /** The record the event is about, by which an erasure finds the delivery (SPEC §17); none for a test or a log entry. */
  readonly objectId?: string | undefined;
  /** Set for an entry of the log that is not sent (`webhook.disabled`). */
  readonly status?: 'failed';
  readonly error?: string;
}

export interface AttemptRecord {
  readonly status: DeliveryRow['status'];
  readonly nextAttemptAt: Date | null;
  readonly httpStatus: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly response: string | null;
}

export type SubscriptionChanges = Partial<
  Pick<
    SubscriptionRow,
    'url' | 'description' | 'eventTypes' | 'filter' | 'active' | 'secret' | 'previousSecrets' | 'createdBy'
  >
>;

/** Of a subscription `s`: its creating token neither revoked nor expired (one made before owners were kept: valid). */
const OWNER_VALID = sql`coalesce(${tokenHolds(sql.raw('s.created_by'), sql.raw('s.tenant_id'))}, true)`;

const SUBSCRIPTION_COLUMNS = sql.raw(
  'id, tenant_id, url, description, event_types, families, filter, active, disabled_reason, secret, previous_secrets, created_by, failing_since, created_at, updated_at',
);
const DELIVERY_COLUMNS = sql.raw(
  'd.id, d.subscription_id, d.event_id, d.event_type, d.payload, d.status, d.tries, d.next_attempt_at, d.last_attempt_at, d.last_http_status, d.last_error, d.last_duration_ms, d.last_response, d.created_at',
);

/**
 * Subscriptions, deliveries and attempts. Every statement a request reaches is confined to its
 * tenant; the dispatcher's and the worker's name rows by the ids they were handed.
 */
export class WebhookRepository {
  async list(db: Db, tenantId: string): Promise<SubscriptionRow[]> {
    const { rows } = await sql<SubscriptionRow>`
      select ${SUBSCRIPTION_COLUMNS} from webhook_subscriptions
      where tenant_id = ${tenantId} order by created_at, id`.execute(db);
    return rows;
  }

  async count(db: Db, tenantId: string): Promise<number> {
    const { rows } = await sql<{ count: number }>`
      select count(*)::int as count from webhook_subscriptions where tenant_id = ${tenantId}`.execute(db);
    return rows[0]?.count ?? 0;
  }

  async find(db: Db, tenantId: string, id: string, lock = false): Promise<SubscriptionRow | undefined> {
    const { rows } = await sql<SubscriptionRow>`
      select ${SUBSCRIPTION_COLUMNS} from webhook_subscriptions
      where tenant_id = ${tenantId} and id = ${id} ${lock ? sql`for update` : sql``}`.execute(db);
    return rows[0];
  }

  /**
   * A new subscription follows the feed from where it stands: it receives the events of every
   * transaction still running when it is made, and of every later one.
   */
  async insert(
    db: Db,
    values: Pick<
      SubscriptionRow,
      'tenantId' | 'url' | 'description' | 'eventTypes' | 'families' | 'filter' | 'active' | 'secret'
    > & {
      createdBy: string;
    },
  ): Promise<SubscriptionRow> {
    const { rows } = await sql<SubscriptionRow>`
      insert into webhook_subscriptions
        (id, tenant_id, url, description, event_types, families, filter, active, secret, created_by, cursor_xid)
      values (${newId()}, ${values.tenantId}, ${values.url}, ${values.description}, ${values.eventTypes},
        ${values.families}, ${jsonOrNull(values.filter)}::jsonb, ${values.active}, ${values.secret}, ${values.createdBy},
        pg_snapshot_xmin(pg_current_snapshot()))
      returning ${SUBSCRIPTION_COLUMNS}`.execute(db);
    return rows[0] as SubscriptionRow;
  }

  /** Applies `changes`; turning a subscription on again starts it from the feed's present and clears its failures. */
  async update(
    db: Db,
    tenantId: string,
    id: string,
    changes: SubscriptionChanges,
  ): Promise<SubscriptionRow | undefined> {
    const set = Object.entries(changes).map(([field, value]) =>
      field === 'previousSecrets' || field === 'filter'
        ? sql`${sql.ref(field)} = ${jsonOrNull(value)}::jsonb`
        : sql`${sql.ref(field)} = ${value}`,
    );
    const reactivated = changes.active
      ? sql`, disabled_reason = null, failing_since = null,
          cursor_xid = case when active then cursor_xid else pg_snapshot_xmin(pg_current_snapshot()) end,
          cursor_seq = case when active then cursor_seq else 0 end`
      : sql``;
    const { rows } = await sql<SubscriptionRow>`
      update webhook_subscriptions set ${sql.join(set)}, updated_at = now(), version = version + 1 ${reactivated}
      where tenant_id = ${tenantId} and id = ${id}
      returning ${SUBSCRIPTION_COLUMNS}`.execute(db);
    return rows[0];
  }

  async delete(db: Db, tenantId: string, id: string): Promise<boolean> {
    const result = await sql`delete from webhook_subscriptions where tenant_id = ${tenantId} and id = ${id}`.execute(
      db,
    );
    return (result.numAffectedRows ?? 0n) > 0n;
  }

  /** Newest first; `before` is the id of the last delivery of the previous page. */
  async deliveries(
    db: Db,
    tenantId: string,
    subscriptionId: string,
    page: { status?: string | undefined; before?: string | undefined; limit: number },
  ): Promise<DeliveryRow[]> {
    const status = page.status ? sql`and d.status = ${page.status}` : sql``;
    const before = page.before
      ? sql`and (d.created_at, d.id) < (select created_at, id from webhook_deliveries
          where id = ${page.before} and subscription_id = ${subscriptionId} and tenant_id = ${tenantId})`
      : sql``;
    const { rows } = await sql<DeliveryRow>`
      select ${DELIVERY_COLUMNS} from webhook_deliveries d
      where d.tenant_id = ${tenantId} and d.subscription_id = ${subscriptionId} ${status} ${before}
      order by d.created_at desc, d.id desc
      limit ${page.limit}`.execute(db);
    return rows;
  }

  /** The delivery, locked until the transaction `trx` ends. */
  async findDelivery(trx: Db, tenantId: string, subscriptionId: string, id: string): Promise<DeliveryRow | undefined> {
    const { rows } = await sql<DeliveryRow>`
      select ${DELIVERY_COLUMNS} from webhook_deliveries d
      where d.tenant_id = ${tenantId} and d.subscription_id = ${subscriptionId} and d.id = ${id}
      for update`.execute(trx);
    return rows[0];
  }

  /** Adds deliveries; one already made for the same subscription and event is left as it is. Answers the new ones. */
  async insertDeliveries(db: Db, deliveries: readonly NewDelivery[]): Promise<{ id: string; tenantId: string }[]> {
    if (deliveries.length === 0) return [];
    const values = deliveries.map(
      (d) =>
        sql`(${newId()}, ${d.tenantId}, ${d.subscriptionId}, ${d.eventId}, ${d.eventType}, ${d.payload},
          ${d.status ?? 'pending'}, ${d.error ?? null}, ${d.status ? null : sql`now()`}, ${d.objectId ?? null}::uuid)`,
    );
    const { rows } = await sql<{ id: string; tenantId: string }>`
      insert into webhook_deliveries
        (id, tenant_id, subscription_id, event_id, event_type, payload, status, last_error, next_attempt_at, object_id)
      values ${sql.join(values)}
      on conflict (subscription_id, event_id) do nothing
      returning id, tenant_id`.execute(db);
    return rows;
  }

  /** Puts a finished delivery back in line for another attempt (a retry by hand). */
  /**
   * Puts a delivery in line for an attempt now: a finished one for another try, a pending one for
   * its next try at once (whose scheduled job then finds it made: `replaced_attempt`). Undefined
   * while an attempt is under way (claimed): it must end first.
   */
  async requeue(db: Db, id: string): Promise<DeliveryRow | undefined> {
    const { rows } = await sql<DeliveryRow>`
      update webhook_deliveries d
      set replaced_attempt = case when status = 'pending' then tries + 1 else replaced_attempt end,
        status = 'pending', next_attempt_at = now(), claimed_by = null, claimed_until = null
      where id = ${id} and (claimed_until is null or claimed_until < now())
      returning ${DELIVERY_COLUMNS}`.execute(db);
    return rows[0];
  }

  /**
   * Claims the attempts of these jobs, in one statement: each delivery still pending at the job's
   * try, and not claimed by another job (or its claim lapsed), is claimed for CLAIM_SECONDS, with
   * what its attempt needs. One answer per job, in order: undefined for a job whose attempt was
   * made already, is another's, or whose delivery is gone or finished. Of two jobs of one attempt,
   * one gets it.
   */
  async claim(db: Db, jobs: readonly AttemptClaim[]): Promise<(ClaimedDelivery | undefined)[]> {
    const { rows } = await sql<ClaimedDelivery & { claimedBy: string }>`
      update webhook_deliveries d
      set claimed_by = j.job_id, claimed_until = now() + make_interval(secs => ${CLAIM_SECONDS})
      from unnest(${jobs.map((job) => job.deliveryId)}::uuid[], ${jobs.map((job) => job.tenantId)}::uuid[],
          ${jobs.map((job) => job.attempt - 1)}::int[], ${jobs.map((job) => job.jobId)}::uuid[])
          as j(delivery_id, tenant_id, tries, job_id),
        webhook_subscriptions s
        join tenants t on t.id = s.tenant_id
      where d.id = j.delivery_id and d.tenant_id = j.tenant_id and s.id = d.subscription_id
        and d.status = 'pending' and d.tries = j.tries
        and (d.claimed_until is null or d.claimed_until < now() or d.claimed_by = j.job_id)
      returning ${DELIVERY_COLUMNS}, d.claimed_by, s.url, s.active, s.secret, s.previous_secrets,
        t.active as tenant_active, ${OWNER_VALID} as owner_valid,
        s.failing_since is not null as subscription_failing`.execute(db);
    const byJob = new Map(rows.map(({ claimedBy, ...delivery }) => [claimedBy, delivery]));
    return jobs.map((job) => byJob.get(job.jobId));
  }

  /** Gives a claimed attempt back untried, to be made at `until` (its tenant is inactive). */
  async postpone(db: Db, job: AttemptClaim, until: Date): Promise<boolean> {
    const result = await sql`
      update webhook_deliveries set claimed_by = null, claimed_until = null, next_attempt_at = ${until}
      where id = ${job.deliveryId} and tries = ${job.attempt - 1} and claimed_by = ${job.jobId}`.execute(db);
    return (result.numAffectedRows ?? 0n) > 0n;
  }

  /** The active subscriptions `tokenId` created. */
  async activeOwnedBy(db: Db, tokenId: string): Promise<{ id: string; tenantId: string }[]> {
    const { rows } = await sql<{ id: string; tenantId: string }>`
      select id, tenant_id from webhook_subscriptions where created_by = ${tokenId} and active`.execute(db);
    return rows;
  }

  /** Whether the attempt was made already or another job is making it (the job at hand is a duplicate). */
  async attemptTaken(db: Db, job: AttemptClaim): Promise<boolean> {
    const { rows } = await sql`
      select 1 from webhook_deliveries
      where id = ${job.deliveryId} and (tries >= ${job.attempt} or claimed_until > now())
        and replaced_attempt is distinct from ${job.attempt}`.execute(db);
    return rows.length > 0;
  }

  /**
   * Records claimed attempts and logs them, in one statement; for each, false (nothing written)
   * when the claim is no longer its job's.
   */
  async recordAttempts(
    db: Db,
    attempts: readonly { readonly job: AttemptClaim; readonly record: AttemptRecord }[],
  ): Promise<boolean[]> {
    const column = <T>(value: (attempt: (typeof attempts)[number]) => T) => attempts.map(value);
    const { rows } = await sql<{ jobId: string }>`
      with made as (
        select * from unnest(
          ${column(({ job }) => job.deliveryId)}::uuid[], ${column(({ job }) => job.attempt)}::int[],
          ${column(({ job }) => job.jobId)}::uuid[], ${column(({ record }) => record.status)}::text[],
          ${column(({ record }) => record.nextAttemptAt?.toISOString() ?? null)}::timestamptz[],
          ${column(({ record }) => record.httpStatus)}::int[], ${column(({ record }) => record.error)}::text[],
          ${column(({ record }) => Math.round(record.durationMs))}::int[], ${column(({ record }) => record.response)}::text[]
        ) as m(delivery_id, try, job_id, status, next_attempt_at, http_status, error, duration_ms, response)
      ), recorded as (
        update webhook_deliveries d set
          tries = m.try, status = m.status, next_attempt_at = m.next_attempt_at,
          claimed_by = null, claimed_until = null, last_attempt_at = now(), last_http_status = m.http_status,
          last_error = m.error, last_duration_ms = m.duration_ms, last_response = m.response
        from made m
        where d.id = m.delivery_id and d.tries = m.try - 1 and d.claimed_by = m.job_id
        returning m.*
      ), logged as (
        insert into webhook_attempts (delivery_id, try, http_status, error, duration_ms, response)
        select delivery_id, try, http_status, error, duration_ms, response from recorded
      )
      select job_id from recorded`.execute(db);
    const written = new Set(rows.map((row) => row.jobId));
    return attempts.map(({ job }) => written.has(job.jobId));
  }

  /** The attempts of these deliveries, oldest first. */
  async attempts(db: Db, deliveryIds: readonly string[]): Promise<AttemptRow[]> {
    if (deliveryIds.length === 0) return [];
    const { rows } = await sql<AttemptRow>`
      select delivery_id, try, attempted_at, http_status, error, duration_ms, response
      from webhook_attempts where delivery_id = any(${deliveryIds}::uuid[])
      order by attempted_at, try`.execute(db);
    return rows;
  }

  /**
   * Deliveries waiting past their time by `graceSeconds` with nobody on them: their job was lost
   * (its retries spent while the database was away). Each is put first in line again, and answered
   * so that it gets a new job.
   */
  async overdue(
    db: Db,
    graceSeconds: number,
    limit: number,
  ): Promise<{ id: string; tenantId: string; tries: number }[]> {
    const { rows } = await sql<{ id: string; tenantId: string; tries: number }>`
      update webhook_deliveries set next_attempt_at = now()
      where id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at < now() - make_interval(secs => ${graceSeconds})
          and (claimed_until is null or claimed_until < now())
        order by next_attempt_at
        limit ${limit}
        for update skip locked
      )
      returning id, tenant_id, tries`.execute(db);
    return rows;
  }

  /**
   * After an attempt: a success clears the subscription's failures, a failure starts them (if not
   * yet); answers since when it fails. The row is written only when that changes: attempts of one
   * subscription run side by side, and would otherwise queue for its row one after the other.
   */
  async noteOutcome(db: Db, subscriptionId: string, succeeded: boolean): Promise<{ failingSince: Date | null }> {
    if (succeeded) {
      await sql`
        update webhook_subscriptions set failing_since = null
        where id = ${subscriptionId} and failing_since is not null`.execute(db);
      return { failingSince: null };
    }
    const { rows } = await sql<{ failingSince: Date | null }>`
      with started as (
        update webhook_subscriptions set failing_since = now()
        where id = ${subscriptionId} and failing_since is null
        returning failing_since
      )
      select coalesce(
        (select failing_since from started),
        (select failing_since from webhook_subscriptions where id = ${subscriptionId})
      ) as failing_since`.execute(db);
    return { failingSince: rows[0]?.failingSince ?? null };
  }

  /** Turns an active subscription off; false when it was off already (someone else, or a person, did it). */
  async disable(db: Db, subscriptionId: string, reason: string): Promise<boolean> {
    const { rows } = await sql`
      update webhook_subscriptions set active = false, disabled_reason = ${reason}, updated_at = now(), version = version + 1
      where id = ${subscriptionId} and active
      returning id`.execute(db);
    return rows.length > 0;
  }

  /**
   * The ids of active subscriptions after `afterId`, in id order, that have events of their
   * families past their place in the feed: the dispatcher's pages. One index probe each, so an idle
   * dispatcher costs one statement a poll however many subscriptions there are.
   */
  async behindIds(db: Db, afterId: string | null, limit: number): Promise<string[]> {
    const after = afterId ? sql`and s.id > ${afterId}` : sql``;
    const { rows } = await sql<{ id: string }>`
      select s.id from webhook_subscriptions s
      where s.active ${after}
        and exists (
          select 1 from events e
          where e.tenant_id = s.tenant_id
            and (e.xid, e.seq) > (s.cursor_xid, s.cursor_seq)
            and e.xid < pg_snapshot_xmin(pg_current_snapshot())
            and ${familyOfEvent('e')} = any(s.families)
        )
      order by s.id limit ${limit}`.execute(db);
    return rows.map((row) => row.id);
  }

  /** An active subscription and its place in the feed, locked for the transaction `trx`; undefined when another instance holds it. */
  async lockActive(
    trx: Db,
    id: string,
  ): Promise<(SubscriptionRow & { cursor: Position; ownerValid: boolean }) | undefined> {
    const { rows } = await sql<SubscriptionRow & { cursorXid: string; cursorSeq: string; ownerValid: boolean }>`
      select ${SUBSCRIPTION_COLUMNS}, cursor_xid::text as cursor_xid, cursor_seq::text as cursor_seq,
        ${OWNER_VALID} as owner_valid
      from webhook_subscriptions s where id = ${id} and active
      for update skip locked`.execute(trx);
    const row = rows[0];
    if (!row) return undefined;
    const { cursorXid, cursorSeq, ...subscription } = row;
    return { ...subscription, cursor: { xid: cursorXid, seq: cursorSeq } };
  }

  async moveCursor(db: Db, subscriptionId: string, position: Position): Promise<void> {
    await sql`
      update webhook_subscriptions set cursor_xid = ${position.xid}::xid8, cursor_seq = ${position.seq}::bigint
      where id = ${subscriptionId}`.execute(db);
  }

  /**
   * Removes up to `batch` finished deliveries made before `cutoff`, with their attempts; answers how
   * many went. Pending ones stay, whatever their age.
   */
  async pruneDeliveries(db: Db, cutoff: Date, batch: number): Promise<number> {
    const result = await sql`
      delete from webhook_deliveries
      where id in (
        select id from webhook_deliveries
        where created_at < ${cutoff} and status <> 'pending'
        order by created_at
        limit ${batch}
      )`.execute(db);
    return Number(result.numAffectedRows ?? 0n);
  }

  /** Removes every finished delivery made before `cutoff`, a batch at a time; answers how many. */
  async pruneAll(db: Db, cutoff: Date, batch = 1_000): Promise<number> {
    let removed = 0;
    for (;;) {
      const pruned = await this.pruneDeliveries(db, cutoff, batch);
      removed += pruned;
      if (pruned < batch) return removed;
    }
  }

  /** Whether any webhook work can exist: an active subscription, or a delivery waiting. */
  async anyWork(db: Db): Promise<boolean> {
    const { rows } = await sql`
      select 1 where exists (select 1 from webhook_subscriptions where active)
        or exists (select 1 from webhook_deliveries where status = 'pending')`.execute(db);
    return rows.length > 0;
  }

  /** Deliveries waiting for an attempt, and the age of the oldest (metrics). */
  async backlog(db: Db): Promise<{ pending: number; oldestSeconds: number }> {
    const { rows } = await sql<{ pending: number; oldestSeconds: number | null }>`
      select count(*)::int as pending, extract(epoch from now() - min(created_at))::float8 as oldest_seconds
      from webhook_deliveries where status = 'pending'`.execute(db);
    return { pending: rows[0]?.pending ?? 0, oldestSeconds: rows[0]?.oldestSeconds ?? 0 };
  }
}

/** A value for a jsonb column: its JSON text, or SQL null. */
function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/**
 * An event's family in SQL, as familiesOf says of its type: a pipeline's events are of the leads'
 * family (SPEC §20), a job's of the family its object's `resource` names (SPEC §23).
 */
function familyOfEvent(alias: string) {
  const kind = sql`split_part(${sql.ref(`${alias}.type`)}, '.', 1)`;
  const borrowed = Object.entries(FAMILY_OF_KIND).map(
    ([of, family]) => sql`when ${sql.lit(of)} then ${sql.lit(family)}`,
  );
  const jobs = JOB_EVENT_TYPES.map(
    (type) => sql`when ${sql.lit(type.slice(0, type.indexOf('.')))} then ${sql.ref(`${alias}.object`)} ->> 'resource'`,
  );
  return sql`(case ${kind} ${sql.join([...borrowed, ...jobs], sql` `)} else ${kind} end)`;
}
