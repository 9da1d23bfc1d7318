import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.js';
import type { EventRow } from '../events/event.repository.js';
import type { ApiEvent } from '../events/event.service.js';
import type { AttemptQueue } from './attempt-queue.js';
import type { SecretBox } from './secret-box.js';
import type { WebhookRepository } from './webhook.repository.js';
import { type CompileFilter, WebhookDispatcher } from './webhook-dispatcher.js';
import type { WebhookMetrics } from './webhook-metrics.js';
import type { WebhookSettings } from './webhook-settings.js';
import { WebhookWorker } from './webhook-worker.js';

interface DeliveryParts {
  db: Db;
  settings: WebhookSettings;
  /** FUNIL_EVENT_RETENTION_DAYS: no delivery is made of an event older than that. */
  retentionDays: number;
  repository: WebhookRepository;
  queue: AttemptQueue;
  secrets: SecretBox;
  metrics: WebhookMetrics;
  /** An event as webhooks send it (EventService.render). */
  render: (tenantId: string, row: EventRow) => ApiEvent;
  /** A subscription's filter, compiled once (EventFilters.compile). */
  compileFilter: CompileFilter;
}

/** How often an instance with no webhook work yet looks again. */
const IDLE_CHECK_MS = 1_000;

/**
 * On an instance that delivers (FUNIL_WEBHOOKS_DELIVER): the dispatcher that turns the change feed
 * into deliveries and the worker that makes the attempts, stopped with the app. They start once
 * there is something to deliver (an active subscription, or a delivery waiting): until then the
 * queue is not even opened, so that a server without webhooks pays nothing for them (on the
 * embedded database every query runs on this thread). The dispatcher starts when the queue is open
 * (later, if the database is away).
 */
export function deliverWebhooks(app: FastifyInstance, parts: DeliveryParts): void {
  const { db, repository, queue } = parts;
  const dispatcher = new WebhookDispatcher(
    db,
    repository,
    queue,
    parts.render,
    parts.retentionDays,
    app.log,
    parts.compileFilter,
  );
  const worker = new WebhookWorker(db, repository, queue, parts.secrets, parts.settings, parts.metrics);
  let idle: NodeJS.Timeout | undefined;
  let closed = false;
  const startWhenNeeded = async () => {
    const needed = await repository.anyWork(db).catch(() => false);
    if (closed) return;
    if (!needed) {
      idle = setTimeout(startWhenNeeded, IDLE_CHECK_MS);
      idle.unref();
      return;
    }
    queue.work(
      (job) => worker.attempt(job),
      () => dispatcher.start(),
    );
  };
  app.addHook('onReady', async () => void startWhenNeeded());
  app.addHook('onClose', async () => {
    closed = true;
    clearTimeout(idle);
    await dispatcher.stop();
  });
}
