import type { FastifyBaseLogger as Logger } from 'fastify';
import type { EventFamily } from '../db/change-events.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import { EventRepository, type EventRow } from '../events/event.repository.js';
import { type ApiEvent, EVENT_TYPES } from '../events/event.service.js';
import { type AttemptQueue, settledWithin } from './attempt-queue.js';
import type { WebhookRepository } from './webhook.repository.js';

/** Subscriptions one pass takes, and events read per subscription per pass. */
const SUBSCRIPTIONS_PER_PASS = 50;
const EVENTS_PER_PASS = 500;
/** How often an idle dispatcher looks at the feed (other instances' writes included). */
const POLL_MS = 1_000;
const STOP_WAIT_MS = 2_000;

export type RenderEvent = (
  tenantId: string,
  row: Parameters<EventRepository['feed']>[1] extends never ? never : import('../events/event.repository.js').EventRow,
) => ApiEvent;

/**
 * Turns the change feed into deliveries (SPEC §15: from the outbox of §14). Each subscription
 * follows its tenant's feed from its own position; one transaction reads the events after it,
 * adds a delivery and a first attempt for each event the subscription wants, and moves the
 * position. Whatever happens to an instance, an event becomes a delivery once: a pass that does
 * not commit leaves the position where it was, and one that commits has made the deliveries. The
 * subscriptions are locked for the pass (`skip locked`): instances share them without waiting.
 */
export class WebhookDispatcher {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly db: Db,
    private readonly webhooks: WebhookRepository,
    private readonly queue: AttemptQueue,
    private readonly render: RenderEvent,
    private readonly logger: Logger,
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

  /** One pass over every subscription; answers how many deliveries it made. */
  async dispatch(): Promise<number> {
    let made = 0;
    let more = true;
    while (more && !this.#stopped) {
      const pass = await inTransaction(this.db, (trx) => this.#pass(trx));
      made += pass.made;
      more = pass.more;
    }
    if (made > 0) this.queue.wake();
    return made;
  }

  async #pass(trx: Db): Promise<{ made: number; more: boolean }> {
    const subscriptions = await this.webhooks.claimActive(trx, SUBSCRIPTIONS_PER_PASS);
    const events = new EventRepository(trx);
    let made = 0;
    let more = subscriptions.length === SUBSCRIPTIONS_PER_PASS;
    for (const subscription of subscriptions) {
      const families = subscription.families as EventFamily[];
      const rows = await events.feed(subscription.tenantId, {
        after: subscription.cursor,
        types: families.flatMap((family) => EVENT_TYPES[family] ?? []),
        limit: EVENTS_PER_PASS,
      });
      const last = rows[rows.length - 1];
      if (!last) continue;
      const wanted = new Set(subscription.eventTypes);
      const deliveries = rows
        .filter((row) => wanted.has('*') || wanted.has(row.type))
        .map((row) => {
          const event = this.render(subscription.tenantId, row);
          return {
            tenantId: subscription.tenantId,
            subscriptionId: subscription.id,
            eventId: event.id,
            eventType: event.type,
            payload: JSON.stringify(event),
          };
        });
      const added = await this.webhooks.insertDeliveries(trx, deliveries);
      await this.queue.enqueue(
        trx,
        added.map((delivery) => ({ deliveryId: delivery.id, tenantId: delivery.tenantId, attempt: 1 })),
      );
      await this.webhooks.moveCursor(trx, subscription.id, { xid: last.xid, seq: last.seq });
      made += added.length;
      if (rows.length === EVENTS_PER_PASS) more = true;
    }
    return { made, more };
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
