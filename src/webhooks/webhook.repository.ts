import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Position } from '../events/event.repository.js';
import { newId } from '../shared/ids.js';

/** A subscription as stored (migration 2026-11-24T1500-webhooks); secrets sealed (SecretBox). */
export interface SubscriptionRow {
  readonly id: string;
  readonly tenantId: string;
  readonly url: string;
  readonly description: string | null;
  readonly eventTypes: readonly string[];
  /** The event families its creating token could read (SPEC §15): all it may ever receive. */
  readonly families: readonly string[];
  readonly active: boolean;
  readonly disabledReason: string | null;
  readonly secret: string;
  readonly previousSecret: string | null;
  readonly previousSecretUntil: Date | null;
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

/** A delivery claimed for an attempt, with what the attempt needs of its subscription. */
export interface ClaimedDelivery extends DeliveryRow {
  readonly url: string;
  readonly active: boolean;
  readonly secret: string;
  readonly previousSecret: string | null;
  readonly previousSecretUntil: Date | null;
}

export interface NewDelivery {
  readonly tenantId: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: string;
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
  Pick<SubscriptionRow, 'url' | 'description' | 'eventTypes' | 'active' | 'secret' | 'previousSecret'>
> & { previousSecretUntil?: Date | null };

const SUBSCRIPTION_COLUMNS = sql.raw(
  'id, tenant_id, url, description, event_types, families, active, disabled_reason, secret, previous_secret, previous_secret_until, created_by, failing_since, created_at, updated_at',
);
const DELIVERY_COLUMNS = sql.raw(
  'd.id, d.subscription_id, d.event_id, d.event_type, d.payload, d.status, d.tries, d.next_attempt_at, d.last_attempt_at, d.last_http_status, d.last_error, d.last_duration_ms, d.last_response, d.created_at',
);

/** Subscriptions and deliveries, every statement confined to one tenant but the dispatcher's and the worker's. */
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
   * A new subscription follows the feed from where it stands now: every event of a transaction
   * still running (or later) is its to receive, none committed before.
   */
  async insert(
    db: Db,
    values: Pick<
      SubscriptionRow,
      'tenantId' | 'url' | 'description' | 'eventTypes' | 'families' | 'active' | 'secret'
    > & {
      createdBy: string;
    },
  ): Promise<SubscriptionRow> {
    const { rows } = await sql<SubscriptionRow>`
      insert into webhook_subscriptions
        (id, tenant_id, url, description, event_types, families, active, secret, created_by, cursor_xid)
      values (${newId()}, ${values.tenantId}, ${values.url}, ${values.description}, ${values.eventTypes},
        ${values.families}, ${values.active}, ${values.secret}, ${values.createdBy}, pg_snapshot_xmin(pg_current_snapshot()))
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
    const set = Object.entries(changes).map(([field, value]) => sql`${sql.ref(snake(field))} = ${value}`);
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

  async findDelivery(db: Db, tenantId: string, subscriptionId: string, id: string): Promise<DeliveryRow | undefined> {
    const { rows } = await sql<DeliveryRow>`
      select ${DELIVERY_COLUMNS} from webhook_deliveries d
      where d.tenant_id = ${tenantId} and d.subscription_id = ${subscriptionId} and d.id = ${id}
      for update`.execute(db);
    return rows[0];
  }

  /** Adds deliveries; one already made for the same subscription and event is left as it is. Answers the new ones. */
  async insertDeliveries(db: Db, deliveries: readonly NewDelivery[]): Promise<{ id: string; tenantId: string }[]> {
    if (deliveries.length === 0) return [];
    const values = deliveries.map(
      (d) =>
        sql`(${newId()}, ${d.tenantId}, ${d.subscriptionId}, ${d.eventId}, ${d.eventType}, ${d.payload},
          ${d.status ?? 'pending'}, ${d.error ?? null})`,
    );
    const { rows } = await sql<{ id: string; tenantId: string }>`
      insert into webhook_deliveries (id, tenant_id, subscription_id, event_id, event_type, payload, status, last_error)
      values ${sql.join(values)}
      on conflict (subscription_id, event_id) do nothing
      returning id, tenant_id`.execute(db);
    return rows;
  }

  /** Puts a finished delivery back in line for another attempt (a retry by hand). */
  async requeue(db: Db, id: string): Promise<DeliveryRow> {
    const { rows } = await sql<DeliveryRow>`
      update webhook_deliveries d set status = 'pending', next_attempt_at = now(), claimed_until = null
      where id = ${id} returning ${DELIVERY_COLUMNS}`.execute(db);
    return rows[0] as DeliveryRow;
  }

  /**
   * Takes attempt `attempt` of a delivery for one instance for a while: nothing when that attempt
   * was made already, or is being made elsewhere (a duplicate job), or the delivery is finished.
   */
  async claim(db: Db, tenantId: string, id: string, attempt: number): Promise<ClaimedDelivery | undefined> {
    const { rows } = await sql<ClaimedDelivery>`
      update webhook_deliveries d set claimed_until = now() + interval '60 seconds'
      from webhook_subscriptions s
      where d.id = ${id} and d.tenant_id = ${tenantId} and s.id = d.subscription_id
        and d.status = 'pending' and d.tries = ${attempt - 1}
        and (d.claimed_until is null or d.claimed_until < now())
      returning ${DELIVERY_COLUMNS}, s.url, s.active, s.secret, s.previous_secret, s.previous_secret_until`.execute(db);
    return rows[0];
  }

  /** Whether attempt `attempt` was made already or is being made (a second job for it is a duplicate). */
  async attemptTaken(db: Db, id: string, attempt: number): Promise<boolean> {
    const { rows } = await sql`
      select 1 from webhook_deliveries
      where id = ${id} and (tries >= ${attempt} or claimed_until > now())`.execute(db);
    return rows.length > 0;
  }

  async recordAttempt(db: Db, id: string, attempt: number, record: AttemptRecord): Promise<void> {
    await sql`
      update webhook_deliveries set
        tries = ${attempt}, status = ${record.status}, next_attempt_at = ${record.nextAttemptAt},
        claimed_until = null, last_attempt_at = now(), last_http_status = ${record.httpStatus},
        last_error = ${record.error}, last_duration_ms = ${Math.round(record.durationMs)},
        last_response = ${record.response}
      where id = ${id}`.execute(db);
  }

  /** After an attempt: a success clears the subscription's failures, a failure starts them (if not yet). */
  async noteOutcome(db: Db, subscriptionId: string, succeeded: boolean): Promise<{ failingSince: Date | null }> {
    const { rows } = await sql<{ failingSince: Date | null }>`
      update webhook_subscriptions
      set failing_since = ${succeeded ? null : sql`coalesce(failing_since, now())`}
      where id = ${subscriptionId}
      returning failing_since`.execute(db);
    return rows[0] ?? { failingSince: null };
  }

  async disable(db: Db, subscriptionId: string, reason: string): Promise<void> {
    await sql`
      update webhook_subscriptions set active = false, disabled_reason = ${reason}, updated_at = now(), version = version + 1
      where id = ${subscriptionId}`.execute(db);
  }

  /** Active subscriptions for the dispatcher, each taken by one instance at a time. */
  async claimActive(db: Db, limit: number): Promise<(SubscriptionRow & { cursor: Position })[]> {
    const { rows } = await sql<SubscriptionRow & { cursorXid: string; cursorSeq: string }>`
      select ${SUBSCRIPTION_COLUMNS}, cursor_xid::text as cursor_xid, cursor_seq::text as cursor_seq
      from webhook_subscriptions where active
      order by id
      for update skip locked
      limit ${limit}`.execute(db);
    return rows.map(({ cursorXid, cursorSeq, ...row }) => ({ ...row, cursor: { xid: cursorXid, seq: cursorSeq } }));
  }

  async moveCursor(db: Db, subscriptionId: string, position: Position): Promise<void> {
    await sql`
      update webhook_subscriptions set cursor_xid = ${position.xid}::xid8, cursor_seq = ${position.seq}::bigint
      where id = ${subscriptionId}`.execute(db);
  }

  /** Deliveries waiting for an attempt, and the age of the oldest (metrics). */
  async backlog(db: Db): Promise<{ pending: number; oldestSeconds: number }> {
    const { rows } = await sql<{ pending: number; oldestSeconds: number | null }>`
      select count(*)::int as pending, extract(epoch from now() - min(created_at))::float8 as oldest_seconds
      from webhook_deliveries where status = 'pending'`.execute(db);
    return { pending: rows[0]?.pending ?? 0, oldestSeconds: rows[0]?.oldestSeconds ?? 0 };
  }
}

function snake(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
