import { type RawBuilder, sql } from 'kysely';

/** The first word of a record's event types, `lead.created`, `customer.deleted`; a family needs its resource's read scope. */
export type EventFamily = 'lead' | 'customer';
export const EVENT_FAMILIES: readonly EventFamily[] = ['lead', 'customer'];
/**
 * What an event's object is, the first word of its type: a record's family, a pipeline (of the
 * `lead` family, SPEC §20), or an import or export (SPEC §23: of the family of its `resource`).
 */
export type EventObjectKind = EventFamily | 'pipeline' | 'import' | 'export';

/**
 * SPEC §23's events of a job that ended: types of both families, each event of the family its
 * object's `resource` names (`lead` or `customer`, the family's own name). Whoever reads events
 * shows one only to a reader of that family (EventRepository.feed, WebhookRepository.behindIds).
 */
export const JOB_EVENT_TYPES = ['import.finished', 'export.finished'] as const;
/** The statuses a job ends with: its `*.finished` event is written by the statement that sets one. */
const ENDED = sql`('succeeded', 'failed', 'cancelled')`;

/** The columns of `events` an event statement sets, in the order of the select lists below. */
export const EVENT_COLUMNS = ['tenantId', 'type', 'objectId', 'tokenId', 'requestId', 'object', 'previous'] as const;

/**
 * The events of a write, written by the write's own statement (a data-modifying CTE), so that no
 * change commits without its event and no event without its change. Each takes the CTE of the
 * written rows by name; the row goes into the event as the database holds it (`to_jsonb`), and is
 * shaped for the API when the feed is read.
 */
export const changeEvents = {
  /** One event of `type` per row of `written` (an insert's rows, or a delete's, as they were). */
  ofRows(written: string, type: string, change: ChangeParams): RawBuilder<unknown> {
    const rows = sql.table(written);
    return sql`select tenant_id, ${type}, id, ${change.tokenId}::uuid, ${change.requestId}::text, to_jsonb(${rows}), '{}'::jsonb from ${rows}`;
  },

  /**
   * The event of an update: `written` holds the row after it, `locked` the row before it
   * (`old_row`, as jsonb). `previous` holds the former values of the columns that changed; the
   * type is `<family>.status_changed` when the status is among them, else `<family>.updated`,
   * unless the write names its own (`lead.converted`).
   */
  ofUpdate(family: EventObjectKind, change: ChangeParams & { eventType?: unknown }): RawBuilder<unknown> {
    return sql`
      select w.tenant_id,
        coalesce(${change.eventType}::text,
          case when d.previous ? 'status' then ${`${family}.status_changed`} else ${`${family}.updated`} end),
        w.id, ${change.tokenId}::uuid, ${change.requestId}::text, n.new_row, d.previous
      from written w cross join locked l
      -- offset 0 keeps the planner from inlining new_row into the filter below, which made it
      -- build the row's jsonb twice per column: a third of a status change's database time.
      cross join lateral (select to_jsonb(w) as new_row offset 0) n
      cross join lateral (
        select coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb) as previous
        from jsonb_each(l.old_row) o
        where o.key not in ('version', 'updated_at')
          and n.new_row ? o.key
          and o.value is distinct from n.new_row -> o.key
      ) d`;
  },

  /**
   * The `<kind>.finished` event of each row of `written` (imports or exports, as a data-modifying
   * CTE returned them) that is now over (SPEC §23), `when` it is to be written: the row as it ended
   * (less its `omit` columns), by the token that made the job, its request id `<kind>:<id>` as the
   * job's own writes have it.
   */
  ofFinished(
    written: string,
    kind: 'import' | 'export',
    { when = sql`true`, omit = [] }: { when?: RawBuilder<unknown>; omit?: readonly string[] } = {},
  ): RawBuilder<unknown> {
    const rows = sql.table(written);
    const object = omit.reduce<RawBuilder<unknown>>(
      (json, column) => sql`${json} - ${column}::text`,
      sql`to_jsonb(${rows})`,
    );
    return sql`
      select tenant_id, ${`${kind}.finished`}::text, id, token_id, ${`${kind}:`}::text || id::text, ${object}, '{}'::jsonb
      from ${rows} where status in ${ENDED} and ${when}`;
  },
};

/** The values of a change as statement parameters (placeholders, in a prepared statement). */
export interface ChangeParams {
  readonly tokenId: unknown;
  readonly requestId: unknown;
}
