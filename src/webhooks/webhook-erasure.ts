import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/**
 * A person's data in the webhook deliveries (SPEC §17), redacted by the webhooks' own feature:
 * every statement takes the tenant first.
 */
export const webhookErasure = {
  /**
   * Holds the tenant's webhook dispatch until the transaction `trx` ends: a dispatcher that read
   * an event before it was redacted would otherwise store, and send, its full payload after.
   */
  async holdDispatch(trx: Db, tenantId: string): Promise<void> {
    await sql`select id from webhook_subscriptions where tenant_id = ${tenantId} for share`.execute(trx);
  },

  /**
   * Replaces the stored payloads of these events' webhook deliveries (their JSON as now redacted)
   * and drops what the receivers answered to them (an answer may echo what it was sent).
   */
  async redactPayloads(handle: Db, tenantId: string, payloads: ReadonlyMap<string, string>): Promise<void> {
    if (payloads.size === 0) return;
    const { rows } = await sql<{ id: string }>`
      update webhook_deliveries as delivery set payload = redacted.payload, last_response = null
      from unnest(${[...payloads.keys()]}::text[], ${[...payloads.values()]}::text[]) as redacted (event_id, payload)
      where delivery.subscription_id in (select id from webhook_subscriptions where tenant_id = ${tenantId})
        and delivery.event_id = redacted.event_id
      returning delivery.id`.execute(handle);
    await forgetResponses(handle, rows);
  },

  /**
   * Redacts every webhook delivery about these records that an event's redaction did not reach (its
   * event pruned meanwhile): its payload becomes the event as the feed shows a redacted one
   * (`redacted: true`, `object: {_id}`, `previous: null`), and what the receivers answered is dropped.
   */
  async redactAbout(handle: Db, tenantId: string, objectIds: readonly string[]): Promise<void> {
    if (objectIds.length === 0) return;
    const { rows } = await sql<{ id: string }>`
      update webhook_deliveries set last_response = null,
        payload = (payload::jsonb || jsonb_build_object('redacted', true, 'data', jsonb_build_object(
          'object', jsonb_build_object('_id', object_id), 'changedFields', '[]'::jsonb, 'previous', null)))::text
      where tenant_id = ${tenantId} and object_id = any (${objectIds}::uuid[])
        and payload::jsonb -> 'redacted' is null
      returning id`.execute(handle);
    await forgetResponses(handle, rows);
  },
};

/** Drops what receivers answered to these deliveries' attempts: an answer may echo what it was sent. */
async function forgetResponses(handle: Db, deliveries: readonly { id: string }[]): Promise<void> {
  if (deliveries.length === 0) return;
  await sql`
    update webhook_attempts set response = null
    where delivery_id = any (${deliveries.map((delivery) => delivery.id)}::uuid[])`.execute(handle);
}
