import type { Actor } from '../auth/caller.js';
import type { CustomerObject, CustomerService } from '../customers/customer.service.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import type { EventRow } from '../events/event.repository.js';
import type { ApiEvent, EventService } from '../events/event.service.js';
import { eventErasure, type Histories } from '../events/event-erasure.js';
import { exportRepository } from '../exports/export.repository.js';
import type { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import type { LeadObject, LeadService } from '../leads/lead.service.js';
import { mergeRepository } from '../records/record-merge.js';
import { webhookErasure } from '../webhooks/webhook-erasure.js';
import type { PersonalDataRepository } from './personal-data.repository.js';

/** How many times an erasure looks again for records with the e-mail (one may take it meanwhile). */
const ERASURE_ROUNDS = 3;

/** Everything a tenant holds about one e-mail address (SPEC §17): the records whole, a page of their events. */
export interface PersonalData {
  email: string;
  leads: LeadObject[];
  customers: CustomerObject[];
  events: ApiEvent[];
}

/** Which events to show: those past `after` (an event id), `limit` of them. */
export interface EventPage {
  after: string | undefined;
  limit: number;
}

/** Data kept apart from records that may hold a person's e-mail (an import's rows not applied yet, SPEC §23). */
export interface PersonalDataHolder {
  eraseHolding(handle: Db, tenantId: string, email: string): Promise<unknown>;
}

/** What an erasure did: records deleted, earlier events redacted. */
export interface Erasure {
  leads: number;
  customers: number;
  events: number;
}

/**
 * SPEC §17: access to and erasure of one person's data in a tenant, found by e-mail. An erasure
 * takes each record in a transaction of its own — the record locked, its history and that of
 * every record that held the e-mail redacted (events, the payloads of their webhook deliveries,
 * answers kept for Idempotency-Key replays), then the record deleted with an erasure event —
 * and then redacts what is left elsewhere (events of records deleted before, or whose e-mail
 * changed since) and deletes the tenant's export files. Repeating it finds nothing more to do.
 */
export class PersonalDataService {
  constructor(
    private readonly leads: LeadService,
    private readonly customers: CustomerService,
    private readonly events: EventService,
    private readonly repository: PersonalDataRepository,
    private readonly answers: IdempotencyRepository,
    private readonly holders: readonly PersonalDataHolder[] = [],
  ) {}

  /** Both run on `handle`, the request's. `more`: events follow the page's last. */
  async access(
    handle: Db,
    tenantId: string,
    email: string,
    page: EventPage,
  ): Promise<{ data: PersonalData; more: boolean }> {
    const { repository } = this;
    const after = await this.events.resumeAfter(handle, page.after);
    const [leadIds, customerIds, former] = await Promise.all([
      repository.recordIds(handle, tenantId, 'leads', email),
      repository.recordIds(handle, tenantId, 'customers', email),
      eventErasure.formerHolders(handle, tenantId, email),
    ]);
    const histories = { whole: [...leadIds, ...customerIds, ...former.whole], mentioning: former.mentioning };
    const [leads, customers, events] = await Promise.all([
      Promise.all(leadIds.map((id) => this.leads.lookup(handle, tenantId, id))),
      Promise.all(customerIds.map((id) => this.customers.lookup(handle, tenantId, id))),
      eventErasure.events(handle, tenantId, histories, email, { after, limit: page.limit + 1 }),
    ]);
    const data = {
      email,
      leads: leads.flatMap((stored) => (stored ? [stored.object] : [])),
      customers: customers.flatMap((stored) => (stored ? [stored.object] : [])),
      events: events.slice(0, page.limit).map((row) => this.events.render(tenantId, row)),
    };
    return { data, more: events.length > page.limit };
  }

  async erase(handle: Db, actor: Actor, email: string): Promise<Erasure> {
    const { repository } = this;
    const { tenantId } = actor;
    const erasure: Erasure = { leads: 0, customers: 0, events: 0 };
    // First what would write the person again (an import's rows not applied yet), then the records.
    for (const holder of this.holders) await holder.eraseHolding(handle, tenantId, email);
    // Records that took the e-mail while the others were erased are found by the next round.
    for (let round = 0; round < ERASURE_ROUNDS; round++) {
      let found = 0;
      for (const [table, service] of [
        ['leads', this.leads],
        ['customers', this.customers],
      ] as const) {
        for (const id of await repository.recordIds(handle, tenantId, table, email)) {
          found += 1;
          // Set by the transaction's last run (a deadlock's victim runs again), counted once it committed.
          let redacted = 0;
          const erased = await service.erase(handle, actor, id, email, async (trx) => {
            redacted = await this.#redact(trx, tenantId, { whole: [id], mentioning: [] }, email);
          });
          if (erased) {
            erasure[table] += 1;
            erasure.events += redacted;
          }
        }
      }
      if (found === 0) break;
    }
    const former = await eventErasure.formerHolders(handle, tenantId, email);
    erasure.events += await inTransaction(handle, (trx) => this.#redact(trx, tenantId, former, email));
    // SPEC §17 and §23: any export file of the tenant may hold the person (made before a record
    // was deleted or changed its e-mail, too): every one is deleted, its export shown expired.
    await inTransaction(handle, (trx) => exportRepository.expireAll(trx, tenantId));
    return erasure;
  }

  /**
   * Redacts the events of these histories, their deliveries' payloads and the kept answers that
   * show them, and removes the merges kept for undo that hold the e-mail; answers how many events. Webhook dispatch of the tenant waits meanwhile.
   */
  async #redact(trx: Db, tenantId: string, histories: Histories, email: string): Promise<number> {
    await webhookErasure.holdDispatch(trx, tenantId);
    const redacted = await eventErasure.redact(trx, tenantId, histories, email);
    await webhookErasure.redactPayloads(trx, tenantId, this.#payloads(tenantId, redacted));
    await webhookErasure.redactAbout(trx, tenantId, histories.whole);
    await this.answers.forgetShowing(trx, tenantId, [...histories.whole, email]);
    await mergeRepository.eraseHolding(trx, tenantId, email);
    return redacted.length;
  }

  /** Each event's JSON as webhooks send it, by event id. */
  #payloads(tenantId: string, rows: readonly EventRow[]): Map<string, string> {
    return new Map(
      rows.map((row) => {
        const event = this.events.render(tenantId, row);
        return [event.id, JSON.stringify(event)];
      }),
    );
  }
}
