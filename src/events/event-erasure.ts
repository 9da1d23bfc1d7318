import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { EVENT_SELECTION, type EventRow, eventRowOf, type Position, pastPosition } from './event.repository.js';

/**
 * Whose events hold a person's data: records whose whole history is theirs (they hold the e-mail
 * now, or held it when deleted), and records that held it once and hold another now (only the
 * events that show it are theirs).
 */
export interface Histories {
  readonly whole: readonly string[];
  readonly mentioning: readonly string[];
}

/**
 * A person's data in the change feed (SPEC §17), found and redacted by the events' own feature:
 * every statement takes the tenant first.
 */
export const eventErasure = {
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
  },

  /**
   * Up to `limit` events of these histories past `after`, in feed order: every committed one, not
   * only those the feed would show yet (a transaction open anywhere holds the feed's newest back, and
   * an access request must not end short). One that commits while the pages are read, in a
   * transaction older than the page read last, shows in a new read only.
   */
  async events(
    handle: Db,
    tenantId: string,
    histories: Histories,
    email: string,
    page: { after: Position | undefined; limit: number },
  ): Promise<EventRow[]> {
    const { rows } = await sql<EventRow>`
      select ${EVENT_SELECTION} from events
      where tenant_id = ${tenantId} and ${pastPosition(page.after)} and ${ofHistories(histories, email)}
      order by events.xid, events.seq
      limit ${page.limit}`.execute(handle);
    return rows.map(eventRowOf);
  },

  /**
   * Redacts the events of these histories (SPEC §17: only the record's id stays); returns them as
   * they are now. Every event but an erasure's own, which holds the id alone: a merge's and an
   * undo's (`merge`, `unmerge`) and an import revert's hold the whole record, as any other.
   */
  async redact(handle: Db, tenantId: string, histories: Histories, email: string): Promise<EventRow[]> {
    const { rows } = await sql<EventRow>`
      update events set object = jsonb_build_object('id', object_id), previous = '{}'::jsonb, redacted = true
      where tenant_id = ${tenantId} and not redacted and reason is distinct from 'erasure'
        and ${ofHistories(histories, email)}
      returning ${EVENT_SELECTION}`.execute(handle);
    return rows.map(eventRowOf);
  },
};

/** The events of these histories: all of a whole one's, those of a mentioning one that show the e-mail. */
function ofHistories({ whole, mentioning }: Histories, email: string) {
  return sql`(object_id = any (${whole}::uuid[])
    or (object_id = any (${mentioning}::uuid[]) and (object ->> 'email' = ${email} or previous ->> 'email' = ${email})))`;
}
