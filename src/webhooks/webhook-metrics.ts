import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/database.js';
import { settledWithin } from '../shared/settled-within.js';
import type { WebhookRepository } from './webhook.repository.js';

/** SPEC §15 on /metrics: attempts by outcome, the deliveries waiting, and how long the oldest has waited. */
export class WebhookMetrics {
  readonly #attempts: Counter<'outcome'>;

  constructor(registry: Registry, db: Db, webhooks: WebhookRepository) {
    this.#attempts = new Counter({
      name: 'funil_webhook_attempts_total',
      help:
        'Webhook attempts by outcome: succeeded, retrying (failed, another attempt scheduled), failed (no attempt ' +
        'left, or the subscription was disabled), duplicate (a job for an attempt already made: expected zero).',
      labelNames: ['outcome'],
      registers: [registry],
    });
    // One query per scrape serves both gauges, and a scrape never waits on the database for long: a
    // busy pool is when metrics are wanted most. Past 250 ms the last figures are reported.
    let last = { pending: 0, oldestSeconds: 0 };
    let reading: Promise<void> | undefined;
    const read = async () => {
      reading ??= webhooks
        .backlog(db)
        .then(
          (backlog) => {
            last = backlog;
          },
          () => undefined,
        )
        .finally(() => {
          reading = undefined;
        });
      await settledWithin(reading, 250);
      return last;
    };
    new Gauge({
      name: 'funil_webhook_deliveries_pending',
      help: 'Webhook deliveries waiting for an attempt (all instances).',
      registers: [registry],
      async collect() {
        this.set((await read()).pending);
      },
    });
    new Gauge({
      name: 'funil_webhook_oldest_pending_seconds',
      help: 'Age of the oldest webhook delivery still waiting for success (0 when none waits).',
      registers: [registry],
      async collect() {
        this.set((await read()).oldestSeconds);
      },
    });
  }

  attempted(status: 'pending' | 'succeeded' | 'failed'): void {
    this.#attempts.inc({ outcome: status === 'pending' ? 'retrying' : status });
  }

  duplicate(): void {
    this.#attempts.inc({ outcome: 'duplicate' });
  }
}
