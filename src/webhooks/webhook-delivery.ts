import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { customerFields } from '../customers/customer.fields.js';
import type { Db } from '../db/database.js';
import { EventRepository } from '../events/event.repository.js';
import { EventService } from '../events/event.service.js';
import { leadFields } from '../leads/lead.fields.js';
import type { AttemptQueue } from './attempt-queue.js';
import type { SecretBox } from './secret-box.js';
import type { WebhookRepository } from './webhook.repository.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import type { WebhookMetrics } from './webhook-metrics.js';
import { WebhookWorker } from './webhook-worker.js';

interface DeliveryParts {
  db: Db;
  config: Config;
  repository: WebhookRepository;
  queue: AttemptQueue;
  secrets: SecretBox;
  metrics: WebhookMetrics;
}

/**
 * On an instance that delivers (FUNIL_WEBHOOKS_DELIVER): the dispatcher that turns the change feed
 * into deliveries and the worker that makes the attempts, started once the app is up (the
 * dispatcher when the queue is open: later, if the database is away) and stopped with it.
 */
export function deliverWebhooks(app: FastifyInstance, parts: DeliveryParts): void {
  const { db, config, repository, queue } = parts;
  const events = new EventService(new EventRepository(db), {
    lead: leadFields(config.leadStatuses),
    customer: customerFields,
  });
  const dispatcher = new WebhookDispatcher(
    db,
    repository,
    queue,
    (tenantId, row) => events.render(tenantId, row),
    config.eventRetentionDays,
    app.log,
  );
  const worker = new WebhookWorker(db, repository, queue, parts.secrets, config.webhooks, parts.metrics);
  app.addHook('onReady', async () =>
    queue.work(
      (job) => worker.attempt(job),
      () => dispatcher.start(),
    ),
  );
  app.addHook('onClose', () => dispatcher.stop());
}
