import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { EVENT_SELECTION, type EventRow, eventRowOf } from '../events/event.repository.js';

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
   * The tenant's events of these records, and every other event whose record held this e-mail
   * then (before or after the change): a record whose e-mail changed since, or one deleted. In
   * feed order.
   */
  async events(handle: Db, tenantId: string, recordIds: readonly string[], email: string): Promise<EventRow[]> {
    const { rows } = await sql<EventRow>`
      select ${EVENT_SELECTION} from events
      where tenant_id = ${tenantId} and ${aboutThem(recordIds, email)}
      order by events.xid, events.seq`.execute(handle);
    return rows.map(eventRowOf);
  }

  /** Redacts the events `events` finds (SPEC §17: only the record's id stays); returns them as they are now. */
  async redactEvents(handle: Db, tenantId: string, recordIds: readonly string[], email: string): Promise<EventRow[]> {
    const { rows } = await sql<EventRow>`
      update events set object = jsonb_build_object('id', object_id), previous = '{}'::jsonb, redacted = true
      where tenant_id = ${tenantId} and not redacted and reason is null and ${aboutThem(recordIds, email)}
      returning ${EVENT_SELECTION}`.execute(handle);
    return rows.map(eventRowOf);
  }

  /** Replaces the stored payloads of these events' webhook deliveries (their JSON as now redacted). */
  async redactDeliveries(handle: Db, tenantId: string, payloads: ReadonlyMap<string, string>): Promise<void> {
    if (payloads.size === 0) return;
    await sql`
      update webhook_deliveries as delivery set payload = redacted.payload
      from unnest(${[...payloads.keys()]}::text[], ${[...payloads.values()]}::text[]) as redacted (event_id, payload)
      where delivery.tenant_id = ${tenantId} and delivery.event_id = redacted.event_id`.execute(handle);
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

/** Events of these records, or whose record held this e-mail before or after the change. */
function aboutThem(recordIds: readonly string[], email: string) {
  return sql`(object_id = any (${recordIds}::uuid[]) or object ->> 'email' = ${email} or previous ->> 'email' = ${email})`;
}
