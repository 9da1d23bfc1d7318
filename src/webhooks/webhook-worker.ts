import type { FastifyBaseLogger as Logger } from 'fastify';
import type { WebhookSettings } from '../config.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import type { AttemptJob, AttemptQueue } from './attempt-queue.js';
import type { SecretBox } from './secret-box.js';
import type { ClaimedDelivery, WebhookRepository } from './webhook.repository.js';
import { webhookEntry } from './webhook-entries.js';
import type { WebhookMetrics } from './webhook-metrics.js';
import { sendWebhook, type WebhookOutcome } from './webhook-sender.js';

/** SPEC §15: an attempt succeeds with a 2xx within 10 s. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** A subscription that has failed everything this long is turned off. */
const FAILING_DAYS_BEFORE_DISABLE = 5;

/**
 * Makes one attempt of a delivery (one job of the queue) and records it: the attempt's outcome,
 * the delivery's state, and the next attempt, in one transaction. The delivery is claimed first,
 * so that a second job for the same attempt (not expected, but counted) sends nothing.
 */
export class WebhookWorker {
  constructor(
    private readonly db: Db,
    private readonly webhooks: WebhookRepository,
    private readonly queue: AttemptQueue,
    private readonly secrets: SecretBox,
    private readonly settings: WebhookSettings,
    private readonly metrics: WebhookMetrics,
    private readonly logger: Logger,
  ) {}

  /** Never throws: a failure here would make the queue run the job again, a duplicate attempt. */
  async attempt(job: AttemptJob): Promise<void> {
    try {
      const delivery = await this.webhooks.claim(this.db, job.tenantId, job.deliveryId, job.attempt);
      if (!delivery) {
        // Made already, or being made elsewhere: a duplicate job. Otherwise its delivery is gone or finished.
        if (await this.webhooks.attemptTaken(this.db, job.deliveryId, job.attempt)) this.metrics.duplicate();
        return;
      }
      const outcome = delivery.active
        ? await sendWebhook({
            url: delivery.url,
            id: delivery.eventId,
            body: delivery.payload,
            secrets: await this.#signingSecrets(delivery),
            timeoutMs: ATTEMPT_TIMEOUT_MS,
            policy: this.settings,
          })
        : notSent('the subscription is disabled');
      await this.#record(job, delivery, outcome);
    } catch (error) {
      this.logger.error({ err: error, deliveryId: job.deliveryId }, 'webhook attempt could not be recorded');
    }
  }

  async #signingSecrets(delivery: ClaimedDelivery): Promise<string[]> {
    const sealed = [delivery.secret];
    const overlap = delivery.previousSecretUntil && delivery.previousSecretUntil.getTime() > Date.now();
    if (delivery.previousSecret && overlap) sealed.push(delivery.previousSecret);
    return Promise.all(sealed.map((secret) => this.secrets.unseal(secret)));
  }

  async #record(job: AttemptJob, delivery: ClaimedDelivery, outcome: WebhookOutcome): Promise<void> {
    const delays = this.settings.retryDelaysSec;
    const gone = outcome.status === 410;
    const last = job.attempt > delays.length || gone || !delivery.active;
    const status = outcome.ok ? 'succeeded' : last ? 'failed' : 'pending';
    const nextAttemptAt = status === 'pending' ? new Date(Date.now() + (delays[job.attempt - 1] ?? 0) * 1_000) : null;
    await inTransaction(this.db, async (trx) => {
      await this.webhooks.recordAttempt(trx, delivery.id, job.attempt, {
        status,
        nextAttemptAt,
        httpStatus: outcome.status,
        error: outcome.error,
        durationMs: outcome.durationMs,
        response: outcome.response,
      });
      if (nextAttemptAt) {
        await this.queue.enqueue(trx, [{ ...job, attempt: job.attempt + 1, startAfter: nextAttemptAt }]);
      }
      if (!delivery.active) return;
      const { failingSince } = await this.webhooks.noteOutcome(trx, delivery.subscriptionId, outcome.ok);
      const failingTooLong =
        failingSince !== null && Date.now() - failingSince.getTime() >= FAILING_DAYS_BEFORE_DISABLE * 86_400_000;
      if (gone || failingTooLong) {
        const reason = gone
          ? 'the target answered 410 Gone'
          : `every delivery failed for ${FAILING_DAYS_BEFORE_DISABLE} days`;
        await this.webhooks.disable(trx, delivery.subscriptionId, reason);
        await this.webhooks.insertDeliveries(trx, [
          webhookEntry.disabled({ tenantId: job.tenantId, subscriptionId: delivery.subscriptionId, reason }),
        ]);
      }
    });
    this.metrics.attempted(status);
  }
}

function notSent(error: string): WebhookOutcome {
  return { ok: false, status: null, error, durationMs: 0, response: null };
}
