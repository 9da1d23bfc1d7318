import type { Db } from '../db/database.js';
import type { StoredRow } from '../records/record-store.js';
import { cursorExpired, forbidden, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { EVENT_FAMILIES, type EventFamily, type EventObjectKind, JOB_EVENT_TYPES } from './change-events.js';
import { eventMessages } from './event.messages.js';
import { EventRepository, type EventRow, notAfter, type Position } from './event.repository.js';
import type { CompiledFilter } from './event-filter.js';
import { type FeedPage, readFilteredFeed } from './filtered-feed.js';

/**
 * SPEC §14's event types of records, by family; each family needs its resource's read scope
 * (pipelines': leads', SPEC §20). The events of jobs (JOB_EVENT_TYPES) are of both.
 */
export const EVENT_TYPES = {
  lead: [
    'lead.created',
    'lead.updated',
    'lead.status_changed',
    'lead.converted',
    'lead.merged',
    'lead.deleted',
    'pipeline.created',
    'pipeline.updated',
    'pipeline.deleted',
  ],
  customer: ['customer.created', 'customer.updated', 'customer.status_changed', 'customer.merged', 'customer.deleted'],
} as const satisfies Record<EventFamily, readonly string[]>;
export const ALL_EVENT_TYPES = [...EVENT_TYPES.lead, ...EVENT_TYPES.customer, ...JOB_EVENT_TYPES];
export const READ_SCOPE: Record<EventFamily, string> = { lead: 'leads:read', customer: 'customers:read' };

/** The objects whose events are of another's family, by the first word of their types. */
export const FAMILY_OF_KIND: Readonly<Partial<Record<EventObjectKind, EventFamily>>> = { pipeline: 'lead' };

const FAMILIES_OF_TYPE: ReadonlyMap<string, readonly EventFamily[]> = new Map([
  ...(Object.entries(EVENT_TYPES) as [EventFamily, readonly string[]][]).flatMap(([family, types]) =>
    types.map((type): [string, readonly EventFamily[]] => [type, [family]]),
  ),
  ...JOB_EVENT_TYPES.map((type): [string, readonly EventFamily[]] => [type, EVENT_FAMILIES]),
]);

/**
 * The families an event type belongs to: a reader of any of them may ask for it (a job's event is
 * then shown only for the resources it reads). None for what is no event type.
 */
export function familiesOf(type: string): readonly EventFamily[] {
  return FAMILIES_OF_TYPE.get(type) ?? [];
}

/** Whether an event type is a job's (SPEC §23), of the family of its object's `resource`. */
export function isJobType(type: string): boolean {
  return (JOB_EVENT_TYPES as readonly string[]).includes(type);
}

/** Every event type a reader of `families` may receive. */
export function typesOf(families: readonly EventFamily[]): string[] {
  if (families.length === 0) return [];
  return [...families.flatMap((family) => EVENT_TYPES[family] ?? []), ...JOB_EVENT_TYPES];
}

/** The families a token with `scopes` may read. */
export function familiesReadableWith(scopes: ReadonlySet<string>): EventFamily[] {
  return EVENT_FAMILIES.filter((family) => scopes.has(READ_SCOPE[family]));
}

/** A read scope that lets a token see events of `type`, when it holds none of them. */
export function scopeLackingFor(scopes: ReadonlySet<string>, type: string): string | undefined {
  const scopesOfType = familiesOf(type).map((family) => READ_SCOPE[family]);
  return scopesOfType.some((scope) => scopes.has(scope)) ? undefined : scopesOfType[0];
}

/** How a family's stored rows become API objects: its resource's field table. */
export interface FamilyFields {
  toObject(row: StoredRow): Record<string, unknown>;
  /** The API name of each column (`id` → `_id`), and how to show a column's stored value. */
  fieldOf(column: string): { field: string; fromStored(value: unknown, row: StoredRow): unknown } | undefined;
}

export interface ApiEvent {
  id: string;
  type: string;
  occurredAt: string;
  tenant: string;
  actor: { tokenId: string | null };
  requestId: string | null;
  /** Why a record changed, when not by a request on it (SPEC §17: `erasure`; §21: `merge`, `unmerge`; §23: `revert`). */
  reason?: string;
  /** A source of a merge, deleted: the record it was merged into (SPEC §21). */
  mergedInto?: string;
  /** An erasure redacted it: `object` holds only `_id`, `previous` is null (SPEC §17). */
  redacted?: true;
  data: {
    object: Record<string, unknown>;
    changedFields: string[];
    previous: Record<string, unknown> | null;
    /** On a `*.merged` event: the records merged into this one (SPEC §21). */
    mergedIds?: string[];
  };
}

export interface FeedRequest {
  tenantId: string;
  scopes: ReadonlySet<string>;
  after?: string | undefined;
  types?: readonly string[] | undefined;
  objectId?: string | undefined;
  limit: number;
  /** A filter (SPEC §22), and who its "self" is: the reading token. */
  filter?: CompiledFilter | undefined;
  self?: string | null | undefined;
}

/** An event id: its position, as 16 hex digits of xid then 16 of seq (ids sort in feed order). */
const EVENT_ID = /^[0-9a-f]{16}[0-7][0-9a-f]{15}$/;

export class EventService {
  constructor(private readonly fields: Readonly<Record<EventObjectKind, FamilyFields>>) {}

  /**
   * A page of the feed, read on `handle`: the events after `after`, oldest first; `more` when others
   * follow (and, through a filter, `next`: where the next page starts).
   */
  async feed(handle: Db, request: FeedRequest): Promise<FeedPage<ApiEvent>> {
    const families = familiesReadableWith(request.scopes);
    const types = this.#visibleTypes(families, request.types);
    const after = await this.resumeAfter(handle, request.after);
    if (request.filter) {
      const { filter, self = null } = request;
      const filtered = { ...request, types, families, after, filter, self };
      return readFilteredFeed(handle, filtered, (row) => this.render(request.tenantId, row), idOf);
    }
    const rows = await new EventRepository(handle).feed(request.tenantId, {
      after,
      types,
      families,
      objectId: request.objectId,
      limit: request.limit + 1,
    });
    const page = rows.slice(0, request.limit);
    return { events: page.map((row) => this.render(request.tenantId, row)), more: rows.length > request.limit };
  }

  /**
   * The position an event id sent as `after` names: a 400 for what is no event id, a 410
   * `cursor_expired` when retention has removed events past it (a page would miss them).
   */
  async resumeAfter(handle: Db, after: string | undefined): Promise<Position | undefined> {
    if (after === undefined) return undefined;
    const position = positionOf(after);
    const pruned = await new EventRepository(handle).prunedThrough();
    if (pruned && notAfter(position, pruned)) throw cursorExpired(eventMessages.cursorExpired);
    return position;
  }

  /** The requested types a reader of `families` may read; asking for a family it may not read is a 403. */
  #visibleTypes(families: readonly EventFamily[], requested: readonly string[] | undefined): string[] {
    if (families.length === 0) throw forbidden(eventMessages.scopeNeeded);
    if (requested === undefined) return typesOf(families);
    const denied = requested.find((type) => !familiesOf(type).some((family) => families.includes(family)));
    if (denied) throw forbidden(eventMessages.typeNotAllowed(denied, READ_SCOPE[familiesOf(denied)[0] as EventFamily]));
    return [...new Set(requested)];
  }

  /** An event as the feed and webhooks show it. */
  render(tenantId: string, row: EventRow): ApiEvent {
    const head = {
      id: idOf(row),
      type: row.type,
      occurredAt: row.occurredAt.toISOString(),
      tenant: tenantId,
      actor: { tokenId: row.tokenId },
      requestId: row.requestId,
      ...(row.reason === null ? {} : { reason: row.reason }),
      ...(row.mergedInto ? { mergedInto: row.mergedInto } : {}),
    };
    // What an erasure leaves (SPEC §17): the record's id, and that something happened to it.
    if (row.redacted)
      return { ...head, redacted: true, data: { object: { _id: row.objectId }, changedFields: [], previous: null } };
    if (row.reason === 'erasure')
      return { ...head, data: { object: { _id: row.objectId }, changedFields: [], previous: {} } };
    const fields = this.fields[row.type.slice(0, row.type.indexOf('.')) as EventObjectKind];
    const object = fields.toObject(row.object as StoredRow);
    const former: Record<string, unknown> = {};
    for (const [column, value] of Object.entries(row.previous)) {
      const field = fields.fieldOf(column);
      if (field) former[field.field] = field.fromStored(value, row.object as StoredRow);
    }
    // In the order of the object's fields, not jsonb's; `custom` as one entry per key (SPEC §16).
    const changes = Object.keys(object).flatMap((field): [string, unknown][] => {
      if (!(field in former)) return [];
      if (field !== 'custom') return [[field, former[field]]];
      return customChanges(former.custom as CustomValues, object.custom as CustomValues);
    });
    const changedFields = changes.map(([field]) => field);
    const previous = Object.fromEntries(changes);
    const merged = row.mergedIds ? { mergedIds: row.mergedIds } : {};
    return { ...head, data: { object, changedFields, previous, ...merged } };
  }
}

type CustomValues = Readonly<Record<string, unknown>>;

/** `custom.<key>` and its former value (null when it had none) for each key whose value changed, by key. */
function customChanges(before: CustomValues | null, after: CustomValues): [string, unknown][] {
  const was = new Map(Object.entries(before ?? {}));
  const now = new Map(Object.entries(after));
  return [...new Set([...was.keys(), ...now.keys()])]
    .sort()
    .filter((key) => JSON.stringify(was.get(key)) !== JSON.stringify(now.get(key)))
    .map((key) => [`custom.${key}`, was.get(key) ?? null]);
}

/** An event's id: its position in the feed. */
export function idOf(row: Pick<EventRow, 'xid' | 'seq'>): string {
  return BigInt(row.xid).toString(16).padStart(16, '0') + BigInt(row.seq).toString(16).padStart(16, '0');
}

function positionOf(id: string): Position {
  if (!EVENT_ID.test(id)) {
    throw validationFailed([{ field: 'after', message: fieldMessage('after', fieldMessages.invalid()) }]);
  }
  return { xid: BigInt(`0x${id.slice(0, 16)}`).toString(), seq: BigInt(`0x${id.slice(16)}`).toString() };
}
