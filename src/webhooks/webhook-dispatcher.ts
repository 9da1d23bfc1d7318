import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import type { EventFamily } from '../events/change-events.js';
import { EventRepository, type EventRow } from '../events/event.repository.js';
import { type ApiEvent, typesOf } from '../events/event.service.js';
import type { CompiledFilter } from '../events/event-filter.js';
import type { EventFilter } from '../events/event-filter.schemas.js';
import { settledWithin } from '../shared/settled-within.js';
import type { AttemptQueue } from './attempt-queue.js';
import { pauseForOwner } from './subscription-owner.js';
import type { WebhookRepository } from './webhook.repository.js';
import { deliveryOf } from './webhook-entries.js';

/** Subscription ids read at a time, and events read per subscription at a time. */
const SUBSCRIPTIONS_PER_PAGE = 100;
const EVENTS_PER_PASS = 500;
/**
 * How often deliveries left without a job are looked for, and how far past their time they must
 * be: well beyond a job's own retries (5 × 5 s after a 20 s expiry) and a claim (60 s).
 */
const SWEEP_EVERY_MS = 60_000;
const PRUNE_BATCH = 1_000;
const OVERDUE_GRACE_SECONDS = 600;
/** How often an idle dispatcher looks at the feed (other instances' writes included). */
const POLL_MS = 200;
const STOP_WAIT_MS = 2_000;

/** An event as the feed shows it (EventService.render). */
export type RenderEvent = (tenantId: string, row: EventRow) => ApiEvent;
/** A subscription's filter, compiled (EventFilters.compile: once per distinct filter). */
export type CompileFilter = (filter: EventFilter) => CompiledFilter;

/**
 * Turns the change feed into deliveries (SPEC §15: from the outbox of §14). Each subscription
 * follows its tenant's feed from its own position; one transaction reads the events after it,
 * adds a delivery and a first attempt for each event the subscription wants, and moves the
 * position. Whatever happens to an instance, an event becomes a delivery once: a transaction that
 * does not commit leaves the position where it was, and one that commits has made the deliveries.
 * Each subscription is locked for its transaction (`skip locked`): instances share them without
 * waiting.
 */
export class WebhookDispatcher {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  #sweptAt = Date.now();

  constructor(
    private readonly db: Db,
    private readonly webhooks: WebhookRepository,
    private readonly queue: AttemptQueue,
    private readonly render: RenderEvent,
    /** The delivery log keeps what the feed keeps (FUNIL_EVENT_RETENTION_DAYS). */
    private readonly retentionDays: number,
    private readonly logger: Logger,
    private readonly compileFilter: CompileFilter,
  ) {}

  start(): void {
    this.#schedule(0);
  }

  /** Waits for a pass under way, but not for long: one stuck on an unanswering database must not hold the shutdown. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await settledWithin(this.#running, STOP_WAIT_MS);
  }

  /**
   * One round over every active subscription, a page of ids at a time, each subscription in a
   * transaction of its own (one that fails holds no other back); again while some had more events
   * than one read takes. Answers how many deliveries it made.
   */
  async dispatch(): Promise<number> {
    let made = 0;
    let behind = true;
    while (behind && !this.#stopped) {
      behind = false;
      let after: string | null = null;
      for (;;) {
        const ids = await this.webhooks.behindIds(this.db, after, SUBSCRIPTIONS_PER_PAGE);
        for (const id of ids) {
          if (this.#stopped) return made;
          const pass = await inTransaction(this.db, (trx) => this.#follow(trx, id));
          made += pass.made;
          behind ||= pass.behind;
          if (pass.made > 0) this.queue.wake();
        }
        if (ids.length < SUBSCRIPTIONS_PER_PAGE) break;
        after = ids[ids.length - 1] ?? null;
      }
    }
    if (Date.now() - this.#sweptAt >= SWEEP_EVERY_MS) made += await this.#sweep();
    return made;
  }

  /** Reads a subscription's events after its position, makes their deliveries, and moves the position. */
  async #follow(trx: Db, id: string): Promise<{ made: number; behind: boolean }> {
    const subscription = await this.webhooks.lockActive(trx, id);
    // Another instance has it, or it was paused or deleted meanwhile.
    if (!subscription) return { made: 0, behind: false };
    if (!subscription.ownerValid) {
      await pauseForOwner(trx, this.webhooks, subscription);
      return { made: 0, behind: false };
    }
    const families = subscription.families as EventFamily[];
    // A job's events (SPEC §23) only of the resources the owner could read: the others are not read.
    const rows = await new EventRepository(trx).feed(subscription.tenantId, {
      after: subscription.cursor,
      types: typesOf(families),
      families,
      limit: EVENTS_PER_PASS,
    });
    const last = rows[rows.length - 1];
    if (!last) return { made: 0, behind: false };
    const wanted = new Set(subscription.eventTypes);
    const deliveries = subscription.filter
      ? this.#passing(subscription, rows, wanted, this.compileFilter(subscription.filter))
      : rows
          .filter((row) => wanted.has('*') || wanted.has(row.type))
          .map((row) => deliveryOf(subscription, this.render(subscription.tenantId, row)));
    const added = await this.webhooks.insertDeliveries(trx, deliveries);
    await this.queue.enqueue(
      trx,
      added.map((delivery) => ({ deliveryId: delivery.id, tenantId: delivery.tenantId, attempt: 1 })),
    );
    await this.webhooks.moveCursor(trx, subscription.id, { xid: last.xid, seq: last.seq });
    return { made: added.length, behind: rows.length === EVENTS_PER_PASS };
  }

  /**
   * The deliveries of the events its filter lets through (SPEC §22); the others make none, and the
   * position moves past them all the same. "self" is the subscription's owner.
   */
  #passing(
    subscription: { id: string; tenantId: string; createdBy: string | null },
    rows: readonly EventRow[],
    wanted: ReadonlySet<string>,
    filter: CompiledFilter,
  ) {
    return rows
      .filter((row) => wanted.has('*') || wanted.has(row.type))
      .filter((row) => filter.admits(row.type, row.tokenId, subscription.createdBy))
      .map((row) => this.render(subscription.tenantId, row))
      .filter((event) => filter.matches(event))
      .map((event) => deliveryOf(subscription, event));
  }

  /**
   * Deliveries whose job was lost (its retries spent while the database was away) get a new one;
   * and the delivery log loses what is older than its retention.
   */
  async #sweep(): Promise<number> {
    this.#sweptAt = Date.now();
    const cutoff = new Date(Date.now() - this.retentionDays * 86_400_000);
    let pruned = PRUNE_BATCH;
    while (pruned === PRUNE_BATCH && !this.#stopped) {
      pruned = await this.webhooks.pruneDeliveries(this.db, cutoff, PRUNE_BATCH);
    }
    const found = await inTransaction(this.db, async (trx) => {
      const overdue = await this.webhooks.overdue(trx, OVERDUE_GRACE_SECONDS, 500);
      await this.queue.enqueue(
        trx,
        overdue.map((delivery) => ({
          deliveryId: delivery.id,
          tenantId: delivery.tenantId,
          attempt: delivery.tries + 1,
        })),
      );
      return overdue.length;
    });
    if (found > 0) {
      this.logger.warn({ deliveries: found }, 'webhook deliveries without a job found overdue: queued again');
      this.queue.wake();
    }
    return found;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.dispatch()
        .then(
          () => undefined,
          (error: unknown) => this.logger.warn({ err: error }, 'webhook dispatch failed'),
        )
        .finally(() => this.#schedule(POLL_MS));
    }, delayMs);
    this.#timer.unref();
  }
}
