import type { FastifyPluginAsync } from 'fastify';
import type { Config } from './config.js';
import { EventRepository } from './events/event.repository.js';
import { pruneEventsPeriodically } from './events/event-retention.js';
import { importRepository } from './imports/import.repository.js';
import { mergeRepository } from './records/record-merge.js';
import type { Services } from './services.js';
import { deliverWebhooks } from './webhooks/webhook-delivery.js';
import { WebhookMetrics } from './webhooks/webhook-metrics.js';

interface WorkersOptions {
  services: Services;
  config: Config;
}

/** How long a merge is kept past its events' retention (its undo is then a 410). */
const MERGE_GRACE_MS = 30 * 86_400_000;

/** How often the answers kept for Idempotency-Key replays past their 24 hours are removed. */
const IDEMPOTENCY_PURGE_MS = 60 * 60_000;

/**
 * Every background job of an instance, started when the app is ready and stopped when it closes
 * (before the database, which the app closes last): the events' retention (with the webhook
 * deliveries made from them), the removal of a deleted custom field's values, the moves of leads
 * out of removed pipeline stages, the exports (SPEC §23: resumed, and their files swept after 24 hours), the matching keys of the records written before they existed, the
 * purge of kept Idempotency-Key answers, and, on an instance that delivers (FUNIL_WEBHOOKS_DELIVER), the webhook
 * dispatcher and worker. A plugin of its own, so that its hooks close before the root's.
 */
export const workers: FastifyPluginAsync<WorkersOptions> = async (app, { services, config }) => {
  const {
    db,
    webhookRepository,
    attemptQueue,
    jobQueue,
    secrets,
    events,
    eventFilters,
    fieldValueRemoval,
    idempotency,
    pipelineMoves,
    matchKeyBackfill,
    importJobs,
    exportRuns,
  } = services;
  const metrics = new WebhookMetrics(app.metricsRegistry, db, webhookRepository);
  if (config.webhooks.deliver) {
    deliverWebhooks(app, {
      db,
      settings: config.webhooks,
      retentionDays: config.eventRetentionDays,
      repository: webhookRepository,
      queue: attemptQueue,
      secrets,
      metrics,
      render: (tenantId, row) => events.render(tenantId, row),
      compileFilter: (filter) => eventFilters.compile(filter),
    });
  }

  let stopRetention: (() => Promise<void>) | undefined;
  let purge: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    stopRetention = pruneEventsPeriodically(
      new EventRepository(db),
      config.eventRetentionDays,
      app.log,
      async (cutoff) => {
        await webhookRepository.pruneAll(db, cutoff);
        // A merge is kept 30 days past its events, to answer its undo with a 410 rather than a 404.
        await mergeRepository.prune(db, new Date(cutoff.getTime() - MERGE_GRACE_MS));
        // An import is kept as long as its events: its revert reads them.
        await importRepository.prune(db, cutoff);
      },
    );
    fieldValueRemoval
      .resumeAll()
      .catch((error: unknown) => app.log.error({ err: error }, 'custom field values: resume failed'));
    pipelineMoves.resumeAll().catch((error: unknown) => app.log.error({ err: error }, 'pipeline moves: resume failed'));
    matchKeyBackfill
      .resumeAll()
      .catch((error: unknown) => app.log.error({ err: error }, 'matching keys: backfill failed to start'));
    importJobs.resumeAll().catch((error: unknown) => app.log.error({ err: error }, 'imports: resume failed'));
    exportRuns.resumeAll().catch((error: unknown) => app.log.error({ err: error }, 'exports: resume failed'));
    purge = setInterval(() => {
      idempotency.purgeExpired().catch((error) => app.log.warn({ err: error }, 'idempotency purge failed'));
    }, IDEMPOTENCY_PURGE_MS);
    purge.unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(purge);
    await Promise.all([
      stopRetention?.(),
      fieldValueRemoval.stop(),
      pipelineMoves.stop(),
      matchKeyBackfill.stop(),
      exportRuns.stop(),
      jobQueue.stop(),
    ]);
  });
};
