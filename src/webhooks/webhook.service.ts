import { authMessages } from '../auth/auth.messages.js';
import type { Caller } from '../auth/caller.js';
import type { Db } from '../db/database.js';
import { inTransaction, lockKey } from '../db/transaction.js';
import type { EventFamily } from '../events/change-events.js';
import {
  familiesOf,
  familiesReadableWith,
  isJobType,
  READ_SCOPE,
  scopeLackingFor,
  typesOf,
} from '../events/event.service.js';
import type { EventFilter } from '../events/event-filter.schemas.js';
import type { EventFilters } from '../events/event-filters.js';
import { conflict, forbidden, notFound, serviceUnavailable, validationFailed } from '../shared/errors.js';
import { isUuid } from '../shared/ids.js';
import type { AttemptQueue } from './attempt-queue.js';
import type { SecretBox } from './secret-box.js';
import { webhookMessages } from './webhook.messages.js';
import type {
  AttemptRow,
  DeliveryRow,
  SubscriptionChanges,
  SubscriptionRow,
  WebhookRepository,
} from './webhook.repository.js';
import type { Delivery, Webhook, WebhookCreate, WebhookUpdate } from './webhook.schemas.js';
import { webhookEntry } from './webhook-entries.js';
import type { WebhookSettings } from './webhook-settings.js';
import { newWebhookSecret } from './webhook-signature.js';
import { TargetLookupUnavailable, targetProblem } from './webhook-target.js';

export const MAX_SUBSCRIPTIONS = 25;
/** Rotations within one 24 h overlap beyond this drop the oldest secret early (each signature costs an HMAC). */
const MAX_PREVIOUS_SECRETS = 5;
/** SPEC §15: after a rotation, the former secret signs beside the new one this long. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/**
 * SPEC §15's subscriptions and their delivery log, for one tenant at a time; each call runs on the
 * `handle` it is given (a request's).
 */
export class WebhookService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly queue: AttemptQueue,
    private readonly secrets: SecretBox,
    private readonly settings: WebhookSettings,
    private readonly filters: EventFilters,
  ) {}

  async list(handle: Db, tenantId: string): Promise<Webhook[]> {
    return (await this.webhooks.list(handle, tenantId)).map(toWebhook);
  }

  async get(handle: Db, tenantId: string, id: string): Promise<Webhook> {
    return toWebhook(await this.#find(handle, tenantId, id));
  }

  async create(handle: Db, caller: Caller, body: WebhookCreate): Promise<Webhook & { secret: string }> {
    const families = readableFamilies(caller.scopes, typesNamedIn(body));
    if (body.filter) this.filters.check(body.filter, receivedTypes(families, body.events));
    await this.#checkTarget(body.url);
    const secret = newWebhookSecret();
    const sealed = await this.secrets.seal(secret);
    const row = await inTransaction(handle, async (trx) => {
      // Creations of one tenant one at a time: two at once must not both pass the count.
      await lockKey(trx, `${caller.tenantId}|webhook_subscriptions`);
      if ((await this.webhooks.count(trx, caller.tenantId)) >= MAX_SUBSCRIPTIONS) {
        throw conflict(webhookMessages.tooMany(MAX_SUBSCRIPTIONS));
      }
      return this.webhooks.insert(trx, {
        tenantId: caller.tenantId,
        url: body.url,
        description: body.description ?? null,
        eventTypes: body.events,
        families,
        filter: kept(body.filter),
        active: body.active ?? true,
        secret: sealed,
        createdBy: caller.tokenId,
      });
    });
    return { ...toWebhook(row), secret };
  }

  /**
   * Changing where or what a subscription delivers (its url, events or filter), or turning it on
   * again, needs the read scopes of every family it receives (SPEC §15): a token that cannot read
   * lead events must not point them at a new address. Turning it on again makes the caller its owner.
   */
  async update(handle: Db, caller: Caller, id: string, body: WebhookUpdate): Promise<Webhook> {
    if (body.url !== undefined) await this.#checkTarget(body.url);
    return inTransaction(handle, async (trx) => {
      const current = await this.#find(trx, caller.tenantId, id, true);
      const reactivated = body.active === true && !current.active;
      const events = body.events ?? current.eventTypes;
      if (body.url !== undefined || body.events !== undefined || body.filter !== undefined || reactivated) {
        readsAll(caller, current, events);
      }
      const families = current.families as EventFamily[];
      if (body.events) checkTypes(body.events, families);
      if (body.filter) {
        checkTypes(body.filter.types ?? [], families);
        this.filters.check(body.filter, receivedTypes(families, events));
      }
      const changes: SubscriptionChanges = Object.fromEntries(
        Object.entries({
          url: body.url,
          eventTypes: body.events,
          filter: body.filter === undefined ? undefined : kept(body.filter),
          description: body.description,
          active: body.active,
          createdBy: reactivated ? caller.tokenId : undefined,
        }).filter(([, value]) => value !== undefined),
      );
      return toWebhook((await this.webhooks.update(trx, caller.tenantId, id, changes)) as SubscriptionRow);
    });
  }

  async delete(handle: Db, tenantId: string, id: string): Promise<void> {
    if (!(await this.webhooks.delete(handle, tenantId, id))) throw notFound(webhookMessages.webhookNotFound);
  }

  /**
   * A new secret; the one it replaces keeps signing beside it for 24 h (SPEC §15), and so do those
   * replaced before still within their own 24 h.
   */
  async rotateSecret(handle: Db, tenantId: string, id: string): Promise<Webhook & { secret: string }> {
    const secret = newWebhookSecret();
    const sealed = await this.secrets.seal(secret);
    const row = await inTransaction(handle, async (trx) => {
      const current = await this.#find(trx, tenantId, id, true);
      const now = Date.now();
      const stillSigning = current.previousSecrets.filter((entry) => Date.parse(entry.until) > now);
      const replaced = { secret: current.secret, until: new Date(now + ROTATION_OVERLAP_MS).toISOString() };
      return (await this.webhooks.update(trx, tenantId, id, {
        secret: sealed,
        previousSecrets: [...stillSigning, replaced].slice(-MAX_PREVIOUS_SECRETS),
      })) as SubscriptionRow;
    });
    return { ...toWebhook(row), secret };
  }

  async deliveries(
    handle: Db,
    tenantId: string,
    id: string,
    page: { status?: string | undefined; before?: string | undefined; limit: number },
  ): Promise<{ deliveries: Delivery[]; more: boolean }> {
    await this.#find(handle, tenantId, id);
    const rows = await this.webhooks.deliveries(handle, tenantId, id, { ...page, limit: page.limit + 1 });
    const shown = rows.slice(0, page.limit);
    const attempts = new Map<string, AttemptRow[]>();
    for (const attempt of await this.webhooks.attempts(
      handle,
      shown.map((row) => row.id),
    )) {
      attempts.set(attempt.deliveryId, [...(attempts.get(attempt.deliveryId) ?? []), attempt]);
    }
    return {
      deliveries: shown.map((row) => toDelivery(row, attempts.get(row.id) ?? [])),
      more: rows.length > page.limit,
    };
  }

  /** Sends a `webhook.test` event now, to an active subscription or a paused one alike. */
  async test(handle: Db, caller: Caller, id: string): Promise<Delivery> {
    await this.#queueReady();
    const delivery = await inTransaction(handle, async (trx) => {
      const subscription = await this.#find(trx, caller.tenantId, id);
      readsAll(caller, subscription);
      const [added] = await this.webhooks.insertDeliveries(trx, [webhookEntry.test(subscription, caller)]);
      if (!added) throw new Error('a test delivery was not added');
      await this.#enqueue(trx, added.id, caller.tenantId, 1);
      return this.webhooks.findDelivery(trx, caller.tenantId, id, added.id);
    });
    this.queue.wake();
    return toDelivery(delivery as DeliveryRow);
  }

  /**
   * A retry by hand: the delivery gets an attempt now, whether it failed or waits for its next
   * automatic try, which it then replaces (SPEC §15). An attempt under way must end first (409).
   */
  async retry(handle: Db, caller: Caller, id: string, deliveryId: string): Promise<Delivery> {
    if (!isUuid(deliveryId)) throw notFound(webhookMessages.deliveryNotFound);
    await this.#queueReady();
    const { tenantId } = caller;
    const delivery = await inTransaction(handle, async (trx) => {
      readsAll(caller, await this.#find(trx, tenantId, id));
      const current = await this.webhooks.findDelivery(trx, tenantId, id, deliveryId);
      if (!current || current.eventType === 'webhook.disabled') throw notFound(webhookMessages.deliveryNotFound);
      const requeued = await this.webhooks.requeue(trx, deliveryId);
      if (!requeued) throw conflict(webhookMessages.attemptUnderWay);
      await this.#enqueue(trx, deliveryId, tenantId, requeued.tries + 1);
      // The attempts made so far, as the log shows them: the one this asks for is made after the answer.
      return toDelivery(requeued, await this.webhooks.attempts(trx, [deliveryId]));
    });
    this.queue.wake();
    return delivery;
  }

  /** Opened before the transaction that enqueues (an instance that does not deliver queues too). */
  async #queueReady(): Promise<void> {
    try {
      await this.queue.ready();
    } catch {
      throw serviceUnavailable();
    }
  }

  async #enqueue(trx: Db, deliveryId: string, tenantId: string, attempt: number): Promise<void> {
    await this.queue.enqueue(trx, [{ deliveryId, tenantId, attempt }]);
  }

  async #find(handle: Db, tenantId: string, id: string, lock = false): Promise<SubscriptionRow> {
    const row = await this.webhooks.find(handle, tenantId, id, lock);
    if (!row) throw notFound(webhookMessages.webhookNotFound);
    return row;
  }

  async #checkTarget(url: string): Promise<void> {
    const problem = await targetProblem(url, this.settings).catch((error: unknown) => {
      if (error instanceof TargetLookupUnavailable) throw serviceUnavailable(webhookMessages.lookupUnavailable, 5);
      throw error;
    });
    if (problem) throw validationFailed([{ field: 'url', message: webhookMessages.badTarget(problem) }]);
  }
}

/**
 * A 403 naming the first read scope `caller` lacks of the families `subscription` receives (SPEC
 * §15): those of its event types (with their new list when it changes), all its families for `*`
 * and for a job's events (SPEC §23), which it receives of each resource it may read.
 */
function readsAll(caller: Caller, subscription: SubscriptionRow, types = subscription.eventTypes): void {
  const all = subscription.families as EventFamily[];
  const families = types.includes('*') ? all : types.flatMap((type) => (isJobType(type) ? all : familiesOf(type)));
  const lacking = families.map((family) => READ_SCOPE[family]).find((scope) => scope && !caller.scopes.has(scope));
  if (lacking !== undefined) throw forbidden(authMessages.scopeLacking(lacking));
}

/**
 * The event families a token with `scopes` may subscribe to; a 403 when none, or when `types`
 * names one of a family it cannot read (as the feed answers). Types of no family are the schema's
 * to refuse (400). Also run before the body is validated (webhook.routes.ts), since SPEC §2 puts
 * the 403 first.
 */
export function readableFamilies(scopes: ReadonlySet<string>, types: unknown): EventFamily[] {
  const families = familiesReadableWith(scopes);
  if (families.length === 0) throw forbidden(webhookMessages.nothingToRead);
  if (Array.isArray(types))
    checkTypes(
      types.filter((type): type is string => typeof type === 'string'),
      families,
    );
  return families;
}

/** A filter as kept: none for null, and for `{}`, which lets every event through (the unfiltered path is cheaper). */
function kept(filter: EventFilter | null | undefined): EventFilter | null {
  return filter && Object.keys(filter).length > 0 ? filter : null;
}

/** The event types a body names: its `events`, and its filter's `types` (read before the body is validated). */
export function typesNamedIn(body: unknown): unknown[] {
  const { events, filter } = (body ?? {}) as { events?: unknown; filter?: unknown };
  const types = filter !== null && typeof filter === 'object' ? (filter as { types?: unknown }).types : undefined;
  return [events, types].flatMap((list) => (Array.isArray(list) ? list : []));
}

/** The types a subscription of `families` to `events` receives: those named, or all of its families' for `*`. */
function receivedTypes(families: readonly EventFamily[], events: readonly string[]): readonly string[] {
  return events.includes('*') ? typesOf(families) : events;
}

/** Named types must be of families the creating token could read (403, as the feed answers). */
function checkTypes(types: readonly string[], families: readonly EventFamily[]): void {
  const scopes = new Set(families.map((family) => READ_SCOPE[family]));
  for (const type of types) {
    const lacking = scopeLackingFor(scopes, type);
    if (lacking !== undefined) throw forbidden(webhookMessages.typeNotAllowed(type, lacking));
  }
}

function toWebhook(row: SubscriptionRow): Webhook {
  const overlap = row.previousSecrets
    .map((entry) => entry.until)
    .filter((until) => Date.parse(until) > Date.now())
    .sort()
    .pop();
  return {
    id: row.id,
    url: row.url,
    events: [...row.eventTypes],
    description: row.description,
    filter: row.filter,
    active: row.active,
    disabledReason: row.disabledReason,
    pausedReason: row.disabledReason,
    previousSecretExpiresAt: overlap ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toDelivery(row: DeliveryRow, attempts: readonly AttemptRow[] = []): Delivery {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType,
    status: row.status,
    tries: row.tries,
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
    httpStatus: row.lastHttpStatus,
    error: row.lastError,
    durationMs: row.lastDurationMs,
    response: row.lastResponse,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    attempts: attempts.map((attempt) => ({
      try: attempt.try,
      at: attempt.attemptedAt.toISOString(),
      httpStatus: attempt.httpStatus,
      error: attempt.error,
      durationMs: attempt.durationMs,
      response: attempt.response,
    })),
  };
}
