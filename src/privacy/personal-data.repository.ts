import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import {
  EVENT_SELECTION,
  type EventRow,
  eventRowOf,
  inFeedOrderAfter,
  type Position,
} from '../events/event.repository.js';

/**
 * Whose events hold a person's data: records whose whole history is theirs (they hold the e-mail
 * now, or held it when deleted), and records that held it once and hold another now (only the
 * events that show it are theirs).
 */
export interface Histories {
  readonly whole: readonly string[];
  readonly mentioning: readonly string[];
}

/** Where a person's data is found besides the records themselves (SPEC §17): every statement takes the tenant first. */
export class PersonalDataRepository {
  /** The ids of the tenant's leads or customers with this e-mail. */
  async recordIds(handle: Db, tenantId: string, table: 'leads' | 'customers', email: string): Promise<string[]> {
    const rows = await handle
      .selectFrom(table)
      .select('id')
      .where('tenantId', '=', tenantId)
      .where('email', '=', email)
      .orderBy('createdAt')
      .execute();
    return rows.map((row) => row.id);
  }

  /**
   * Records gone or changed that held the e-mail, found through the partial indexes of migration
   * 2026-11-25T1100: deleted ones by their delete event, changed ones by an event whose `previous`
   * shows it.
   */
  async formerHolders(handle: Db, tenantId: string, email: string): Promise<Histories> {
    const { rows } = await sql<{ objectId: string; deleted: boolean }>`
      select distinct object_id, true as deleted from events
      where tenant_id = ${tenantId} and type in ('lead.deleted', 'customer.deleted') and object ->> 'email' = ${email}
      union
      select distinct object_id, false from events
      where tenant_id = ${tenantId} and previous ? 'email' and previous ->> 'email' = ${email}`.execute(handle);
    return {
      whole: rows.filter((row) => row.deleted).map((row) => row.objectId),
      mentioning: rows.filter((row) => !row.deleted).map((row) => row.objectId),
    };
  }

  /** Up to `limit` events of these histories past `after`, in feed order and as the feed shows them. */
  async events(
    handle: Db,
    tenantId: string,
    histories: Histories,
    email: string,
    page: { after: Position | undefined; limit: number },
  ): Promise<EventRow[]> {
    const { rows } = await sql<EventRow>`
      select ${EVENT_SELECTION} from events
      where tenant_id = ${tenantId} and ${inFeedOrderAfter(page.after)} and ${ofHistories(histories, email)}
      order by events.xid, events.seq
      limit ${page.limit}`.execute(handle);
    return rows.map(eventRowOf);
  }

  /**
   * Holds the tenant's webhook dispatch until the transaction `trx` ends: a dispatcher that read
   * an event before it was redacted would otherwise store, and send, its full payload after.
   */
  async holdDispatch(trx: Db, tenantId: string): Promise<void> {
    await sql`select id from webhook_subscriptions where tenant_id = ${tenantId} for share`.execute(trx);
  }

  /** Redacts the events of these histories (SPEC §17: only the record's id stays); returns them as they are now. */
  async redactEvents(handle: Db, tenantId: string, histories: Histories, email: string): Promise<EventRow[]> {
    const { rows } = await sql<EventRow>`
      update events set object = jsonb_build_object('id', object_id), previous = '{}'::jsonb, redacted = true
      where tenant_id = ${tenantId} and not redacted and reason is null and ${ofHistories(histories, email)}
      returning ${EVENT_SELECTION}`.execute(handle);
    return rows.map(eventRowOf);
  }

  /**
   * Replaces the stored payloads of these events' webhook deliveries (their JSON as now redacted)
   * and drops what the receivers answered to them (an answer may echo what it was sent).
   */
  async redactDeliveries(handle: Db, tenantId: string, payloads: ReadonlyMap<string, string>): Promise<void> {
    if (payloads.size === 0) return;
    const { rows } = await sql<{ id: string }>`
      update webhook_deliveries as delivery set payload = redacted.payload, last_response = null
      from unnest(${[...payloads.keys()]}::text[], ${[...payloads.values()]}::text[]) as redacted (event_id, payload)
      where delivery.subscription_id in (select id from webhook_subscriptions where tenant_id = ${tenantId})
        and delivery.event_id = redacted.event_id
      returning delivery.id`.execute(handle);
    await forgetResponses(handle, rows);
  }

  /**
   * Redacts every webhook delivery about these records that an event's redaction did not reach (its
   * event pruned meanwhile): its payload becomes the event as the feed shows a redacted one
   * (`redacted: true`, `object: {_id}`, `previous: null`), and what the receivers answered is dropped.
   */
  async redactDeliveriesOf(handle: Db, tenantId: string, objectIds: readonly string[]): Promise<void> {
    if (objectIds.length === 0) return;
    const { rows } = await sql<{ id: string }>`
      update webhook_deliveries set last_response = null,
        payload = (payload::jsonb || jsonb_build_object('redacted', true, 'data', jsonb_build_object(
          'object', jsonb_build_object('_id', object_id), 'changedFields', '[]'::jsonb, 'previous', null)))::text
      where tenant_id = ${tenantId} and object_id = any (${objectIds}::uuid[])
        and payload::jsonb -> 'redacted' is null
      returning id`.execute(handle);
    await forgetResponses(handle, rows);
  }

  /**
   * Forgets the answers kept for Idempotency-Key replays (SPEC §7) that show any of `texts` (a
   * record's id, the e-mail): a replay would show the person again.
   */
  async forgetAnswers(handle: Db, tenantId: string, texts: readonly string[]): Promise<void> {
    await sql`
      delete from idempotency_keys
      where tenant_id = ${tenantId}
        and exists (select 1 from unnest(${texts}::text[]) as text where strpos(response_body, text) > 0)`.execute(
      handle,
    );
  }
}

/** The events of these histories: all of a whole one's, those of a mentioning one that show the e-mail. */
function ofHistories({ whole, mentioning }: Histories, email: string) {
  return sql`(object_id = any (${whole}::uuid[])
    or (object_id = any (${mentioning}::uuid[]) and (object ->> 'email' = ${email} or previous ->> 'email' = ${email})))`;
}

/** Drops what receivers answered to these deliveries' attempts: an answer may echo what it was sent. */
async function forgetResponses(handle: Db, deliveries: readonly { id: string }[]): Promise<void> {
  if (deliveries.length === 0) return;
  await sql`
    update webhook_attempts set response = null
    where delivery_id = any (${deliveries.map((delivery) => delivery.id)}::uuid[])`.execute(handle);
}
