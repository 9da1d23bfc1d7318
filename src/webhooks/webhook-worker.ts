import type { Db } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import { TickBatch } from '../shared/tick-batch.js';
import type { AttemptQueue } from './attempt-queue.js';
import type { SecretBox } from './secret-box.js';
import { pauseForOwner } from './subscription-owner.js';
import type { AttemptClaim, AttemptRecord, ClaimedDelivery, WebhookRepository } from './webhook.repository.js';
import { webhookEntry } from './webhook-entries.js';
import type { WebhookMetrics } from './webhook-metrics.js';
import { sendWebhook, type WebhookOutcome } from './webhook-sender.js';
import type { WebhookSettings } from './webhook-settings.js';

/** SPEC §15: an attempt succeeds with a 2xx within 10 s. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How often the attempts of an inactive tenant look whether it is active again: as a first retry would, within these. */
const INACTIVE_RECHECK_MIN_MS = 1_000;
const INACTIVE_RECHECK_MAX_MS = 60_000;
/** A subscription that has failed everything this long is turned off. */
const FAILING_DAYS_BEFORE_DISABLE = 5;

/**
 * Makes one attempt of a delivery (one job of the queue) and records it: the attempt's outcome,
 * the delivery's state, and the next attempt, in one transaction. The delivery is claimed first,
 * so that a second job for the same attempt (not expected, but counted) sends nothing.
 */
export class WebhookWorker {
  /** The jobs fetched together claim their attempts together, and successes are recorded together. */
  readonly #claims = new TickBatch((jobs: readonly AttemptClaim[]) => this.webhooks.claim(this.db, jobs));
  readonly #successes = new TickBatch((attempts: readonly { job: AttemptClaim; record: AttemptRecord }[]) =>
    this.webhooks.recordAttempts(this.db, attempts),
  );

  constructor(
    private readonly db: Db,
    private readonly webhooks: WebhookRepository,
    private readonly queue: AttemptQueue,
    private readonly secrets: SecretBox,
    private readonly settings: WebhookSettings,
    private readonly metrics: WebhookMetrics,
  ) {}

  /**
   * Throws when the attempt could not be claimed or recorded (the database away): the queue then
   * offers the job again, and the same job takes its claim back.
   */
  async attempt(job: AttemptClaim): Promise<void> {
    const delivery = await this.#claims.call(job);
    if (!delivery) {
      // Made already, or another job holds it: a duplicate. Otherwise its delivery is gone or finished.
      if (await this.webhooks.attemptTaken(this.db, job)) this.metrics.duplicate();
      return;
    }
    // Nothing is attempted for an inactive tenant: the attempt waits, untried, until it is active again.
    if (!delivery.tenantActive) return this.#postpone(job);
    // Its creator's token revoked or expired: the subscription pauses, and this delivery with it.
    let active = delivery.active;
    if (active && !delivery.ownerValid) {
      const subscription = { id: delivery.subscriptionId, tenantId: job.tenantId };
      await inTransaction(this.db, (trx) => pauseForOwner(trx, this.webhooks, subscription));
      active = false;
    }
    // A paused subscription sends nothing more, but its test events (checking a target before turning it on).
    const sending = active || delivery.eventType === 'webhook.test';
    const outcome = sending
      ? await sendWebhook({
          url: delivery.url,
          id: delivery.eventId,
          body: delivery.payload,
          secrets: await this.#signingSecrets(delivery),
          timeoutMs: ATTEMPT_TIMEOUT_MS,
          policy: this.settings,
        })
      : notSent('the subscription is disabled');
    await this.#record(job, delivery, outcome, !sending);
  }

  async #postpone(job: AttemptClaim): Promise<void> {
    const firstRetryMs = (this.settings.retryDelaysSec[0] ?? 0) * 1_000;
    const until = new Date(
      Date.now() + Math.min(INACTIVE_RECHECK_MAX_MS, Math.max(INACTIVE_RECHECK_MIN_MS, firstRetryMs)),
    );
    await inTransaction(this.db, async (trx) => {
      if (!(await this.webhooks.postpone(trx, job, until))) return;
      await this.queue.enqueue(trx, [
        { deliveryId: job.deliveryId, tenantId: job.tenantId, attempt: job.attempt, startAfter: until },
      ]);
    });
  }

  async #signingSecrets(delivery: ClaimedDelivery): Promise<string[]> {
    const now = Date.now();
    const previous = delivery.previousSecrets.filter((entry) => Date.parse(entry.until) > now);
    return Promise.all([delivery.secret, ...previous.map((entry) => entry.secret)].map((s) => this.secrets.unseal(s)));
  }

  async #record(job: AttemptClaim, delivery: ClaimedDelivery, outcome: WebhookOutcome, paused: boolean): Promise<void> {
    const delays = this.settings.retryDelaysSec;
    const last = job.attempt > delays.length || outcome.status === 410 || paused;
    const status = outcome.ok ? 'succeeded' : last ? 'failed' : 'pending';
    const nextAttemptAt = status === 'pending' ? new Date(Date.now() + (delays[job.attempt - 1] ?? 0) * 1_000) : null;
    const record = {
      status,
      nextAttemptAt,
      httpStatus: outcome.status,
      error: outcome.error,
      durationMs: outcome.durationMs,
      response: outcome.response,
    } as const;
    const countsForSubscription = !paused && delivery.eventType !== 'webhook.test';
    // The usual case, a success while the subscription is not failing, is one statement: no next
    // attempt to add, no failing streak to end (one begun since the claim ends at the next success);
    // the successes of one turn of the event loop are one statement.
    const recorded =
      outcome.ok && !(countsForSubscription && delivery.subscriptionFailing)
        ? await this.#successes.call({ job, record })
        : await inTransaction(this.db, async (trx) => {
            // Claimed by another job meanwhile (this one outlived its claim): that one records.
            const [written] = await this.webhooks.recordAttempts(trx, [{ job, record }]);
            if (!written) return false;
            if (nextAttemptAt) {
              const next = { deliveryId: job.deliveryId, tenantId: job.tenantId, attempt: job.attempt + 1 };
              await this.queue.enqueue(trx, [{ ...next, startAfter: nextAttemptAt }]);
            }
            if (countsForSubscription) await this.#noteOutcome(trx, delivery.subscriptionId, job.tenantId, outcome);
            return true;
          });
    if (recorded) this.metrics.attempted(status);
  }

  /** Starts or ends the subscription's failing streak; a 410, or five days of failing, turns it off. */
  async #noteOutcome(trx: Db, subscriptionId: string, tenantId: string, outcome: WebhookOutcome): Promise<void> {
    const { failingSince } = await this.webhooks.noteOutcome(trx, subscriptionId, outcome.ok);
    const gone = outcome.status === 410;
    const failingTooLong =
      failingSince !== null && Date.now() - failingSince.getTime() >= FAILING_DAYS_BEFORE_DISABLE * 86_400_000;
    if (!gone && !failingTooLong) return;
    const reason = gone
      ? 'the target answered 410 Gone'
      : `every delivery failed for ${FAILING_DAYS_BEFORE_DISABLE} days`;
    if (await this.webhooks.disable(trx, subscriptionId, reason)) {
      await this.webhooks.insertDeliveries(trx, [webhookEntry.disabled({ tenantId, subscriptionId, reason })]);
    }
  }
}

function notSent(error: string): WebhookOutcome {
  return { ok: false, status: null, error, durationMs: 0, response: null };
}
