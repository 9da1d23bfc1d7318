import type { ApiEvent } from '../events/event.service.js';
import { isUuid, newId } from '../shared/ids.js';
import type { NewDelivery } from './webhook.repository.js';

/** The delivery of `event` (shaped as the feed shows it) to a subscription. */
export function deliveryOf(subscription: { id: string; tenantId: string }, event: ApiEvent): NewDelivery {
  const object = event.data.object as { _id?: unknown; id?: unknown };
  const objectId = object._id ?? object.id;
  return {
    tenantId: subscription.tenantId,
    subscriptionId: subscription.id,
    eventId: event.id,
    eventType: event.type,
    payload: JSON.stringify(event),
    objectId: typeof objectId === 'string' && isUuid(objectId) ? objectId : undefined,
  };
}

/** Deliveries that do not come from the change feed: a test event, and the log entry of a disabling. */
export const webhookEntry = {
  /** `POST /webhooks/:id/test`: a `webhook.test` event, shaped like the feed's. */
  test(subscription: { id: string; tenantId: string; url: string }, actor: { tokenId: string; requestId: string }) {
    const event: ApiEvent & { type: 'webhook.test' } = {
      id: `test_${newId().replaceAll('-', '')}`,
      type: 'webhook.test',
      occurredAt: new Date().toISOString(),
      tenant: subscription.tenantId,
      actor: { tokenId: actor.tokenId },
      requestId: actor.requestId,
      data: { object: { webhookId: subscription.id, url: subscription.url }, changedFields: [], previous: {} },
    };
    return deliveryOf(subscription, event);
  },

  /** Not sent: tells the delivery log why the subscription stopped. */
  disabled(entry: { tenantId: string; subscriptionId: string; reason: string }): NewDelivery {
    const id = `disabled_${newId().replaceAll('-', '')}`;
    return {
      tenantId: entry.tenantId,
      subscriptionId: entry.subscriptionId,
      eventId: id,
      eventType: 'webhook.disabled',
      payload: JSON.stringify({
        id,
        type: 'webhook.disabled',
        occurredAt: new Date().toISOString(),
        reason: entry.reason,
      }),
      status: 'failed',
      error: entry.reason,
    };
  },
};
