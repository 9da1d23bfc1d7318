import type { FastifyBaseLogger } from 'fastify';
import type { EventRepository } from './event.repository.js';

const PRUNE_INTERVAL_MS = 10 * 60_000;
/** Events removed per statement: short statements, so the database never holds much for it at once. */
const PRUNE_BATCH = 5_000;
const DAY_MS = 24 * 60 * 60_000;

/**
 * SPEC §14's retention: every ten minutes (and at start), events older than `days` are removed, a
 * few thousand per statement until none are left; `pruneFirst` removes, before them, what was
 * made from them (webhook deliveries: SPEC §17 wants no copy of an event to outlive it, on every
 * instance, whether or not it delivers). Returns the function that stops it (and waits for a
 * pruning under way, so that the database is not closed under it).
 */
export function pruneEventsPeriodically(
  events: EventRepository,
  days: number,
  log: FastifyBaseLogger,
  pruneFirst: (cutoff: Date) => Promise<unknown> = async () => {},
): () => Promise<void> {
  let running: Promise<void> | undefined;
  const prune = () => {
    const cutoff = new Date(Date.now() - days * DAY_MS);
    running ??= pruneFirst(cutoff)
      .then(() => pruneOld(events, cutoff))
      .then((removed) => {
        if (removed > 0) log.info({ removed }, 'events past their retention removed');
      })
      .catch((error) => log.warn({ err: error }, 'pruning events failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(prune, PRUNE_INTERVAL_MS);
  timer.unref();
  prune();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** Removes every event that occurred before `cutoff`; answers how many. */
export async function pruneOld(events: EventRepository, cutoff: Date): Promise<number> {
  let removed = 0;
  for (;;) {
    const batch = await events.prune(cutoff, PRUNE_BATCH);
    removed += batch;
    if (batch < PRUNE_BATCH) return removed;
  }
}
