import type { Actor } from '../auth/caller.js';
import type { CreateCustomerInput, CustomerObject, CustomerService } from '../customers/customer.service.js';
import type { Db } from '../db/database.js';
import { isCheckViolation } from '../db/errors.js';
import type { KeysetPage } from '../db/keyset.js';
import type { ExpectedVersions } from '../db/precondition.js';
import type { CustomFieldCatalog } from '../fields/custom-field-catalog.js';
import { storedPipeline } from '../pipelines/pipeline.types.js';
import type { PipelineCatalog } from '../pipelines/pipeline-catalog.js';
import { TenantPipelines } from '../pipelines/tenant-pipelines.js';
import { checkAllowed } from '../records/list-query.js';
import type { MatchKeyRules } from '../records/match-key-rules.js';
import { RecordService, type Stored } from '../records/record.service.js';
import type { CreateInput, RecordObject, UpdateInput } from '../records/record-fields.js';
import { notFound, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { type LeadFieldTable, type LeadListKeys, leadFields } from './lead.fields.js';
import { leadMessages } from './lead.messages.js';
import { LEAD_EXTERNAL_ID_KEY, type LeadFilters, leadStore, leadsConvertedTo } from './lead.repository.js';
import { LeadStages } from './lead-stages.js';

export type CreateLeadInput = CreateInput<LeadFieldTable>;
export type UpdateLeadInput = UpdateInput<LeadFieldTable>;
export type LeadObject = RecordObject<LeadFieldTable>;

/** The customer's fields a conversion may set besides those it takes from the lead (SPEC §13). */
export type ConvertLeadInput = Pick<CreateCustomerInput, 'type' | 'value' | 'autoPayment' | 'notes' | 'custom'>;

/** A conversion's outcome: the lead as converted, its customer, and whether that was created. */
export interface Conversion {
  readonly lead: Stored<LeadObject>;
  readonly customer: Stored<CustomerObject>;
  readonly created: boolean;
}

/** The type of a converted lead's event (SPEC §14), whatever else changed with it. */
const CONVERTED = 'lead.converted';

export interface LeadServiceOptions {
  db: Db;
  /** Each tenant's pipelines, which a lead's status is checked against (SPEC §20). */
  pipelines: PipelineCatalog;
  /** The most rows a filtered list page reads (RecordStore.list). */
  scanRows: number | undefined;
  /** Where conversions find or create customers. */
  customers: CustomerService;
  /** The tenants' own fields, shared with the routes that change them. */
  catalog: CustomFieldCatalog;
  /** The matching keys every write keeps (SPEC §21). */
  matchKeys: MatchKeyRules;
}

/** Every rule of a lead write (SPEC §3): defaults, an e-mail or a phone, the status list, If-Match. */
export class LeadService extends RecordService<LeadFieldTable, LeadListKeys> {
  readonly #customers: CustomerService;

  readonly #pipelines: PipelineCatalog;

  constructor({ db, pipelines, scanRows, customers, catalog, matchKeys }: LeadServiceOptions) {
    super({
      store: leadStore(db, scanRows),
      fields: leadFields,
      notFoundText: leadMessages.leadNotFound,
      statusRules: new LeadStages(pipelines),
      uniqueFields: [
        {
          field: 'externalId',
          column: 'externalId',
          constraint: LEAD_EXTERNAL_ID_KEY,
          text: leadMessages.leadExternalIdTaken,
          readScope: 'leads:read',
        },
      ],
      customFields: catalog.forResource('lead'),
      matchKeys,
      // A merge takes a lead's pipeline and status together, and keeps a conversion's customer.
      merging: { carried: ['customerId'], groups: [['pipeline', 'status']] },
    });
    this.#customers = customers;
    this.#pipelines = pipelines;
  }

  protected createValues(actor: Actor, input: CreateLeadInput): Record<string, unknown> {
    const values = { ...this.fields.defaults, ...this.fields.writableOf(input) };
    if (values.email == null && values.phone == null) {
      throw validationFailed(
        [
          { field: 'email', message: fieldMessage('email', fieldMessages.required()) },
          { field: 'phone', message: fieldMessage('phone', fieldMessages.required()) },
        ],
        leadMessages.leadRequired,
      );
    }
    return { ...values, createdBy: actor.tokenId };
  }

  /**
   * SPEC §13: in one transaction, with the lead locked (conversions of one lead take turns), links
   * the customer with the lead's e-mail — created from the lead and `input` when there is none —
   * and moves the lead to its pipeline's first stage of kind `won` (SPEC §20; it stays where it is
   * when the pipeline has none) with its `customerId`. A lead
   * already linked to a customer that exists answers that one and changes nothing.
   */
  convert(handle: Db, actor: Actor, id: string, input: ConvertLeadInput): Promise<Conversion> {
    const { tenantId } = actor;
    const customers = this.#customers;
    return this.transaction(handle, async (trx) => {
      const row = await this.store.findForUpdate(trx, tenantId, id);
      if (!row) throw notFound(this.notFoundText);
      const lead = this.stored(row);
      const linked = lead.object.customerId && (await customers.lookup(trx, tenantId, lead.object.customerId));
      if (linked) return { lead, customer: linked, created: false };
      const { name, email, phone } = lead.object;
      if (!email) {
        throw validationFailed(
          [{ field: 'email', message: fieldMessage('email', fieldMessages.required()) }],
          leadMessages.convertNeedsEmail,
        );
      }
      const { stored: customer, created } = await customers.upsert(
        trx,
        actor,
        'email',
        { ...input, name, email, phone },
        'keep',
      );
      const pipelines = await this.#pipelines.of(trx, tenantId);
      const pipeline = pipelines.find(lead.object.pipeline) ?? pipelines.default;
      const wonStage = TenantPipelines.firstWon(pipeline);
      const won = wonStage && lead.object.pipeline === pipeline.id ? { status: wonStage.key } : {};
      const converted = await this.write(
        trx,
        actor,
        id,
        { ...won, customerId: customer.object._id },
        { eventType: CONVERTED },
      );
      return { lead: converted, customer, created };
    });
  }

  /**
   * SPEC §13: the customer `customerId` is being deleted (in the transaction `trx`): the leads
   * converted to it lose the link, each with its `lead.updated` event, so none points at nothing
   * and converting one again makes its customer anew.
   */
  async unlinkCustomer(trx: Db, actor: Actor, customerId: string): Promise<void> {
    for (const id of await leadsConvertedTo(trx, actor.tenantId, customerId)) {
      await this.write(trx, actor, id, { customerId: null }, {});
    }
  }

  /**
   * SPEC §20: `status=` names stages of the tenant's pipelines (of `pipeline=`'s, when given), a
   * 400 naming what is not; `pipeline=` a pipeline of the tenant.
   */
  override async list<Item>(handle: Db, tenantId: string, filters: object, page: KeysetPage<Item>) {
    const { statuses, pipeline, ...others } = filters as LeadFilters;
    if (statuses === undefined && pipeline == null) return super.list(handle, tenantId, filters, page);
    const placed = await this.#pipelines.using(handle, tenantId, (pipelines) => {
      const within = pipeline == null ? undefined : pipelines.named(pipeline);
      if (statuses)
        checkAllowed('status', statuses, within ? within.stages.map((stage) => stage.key) : pipelines.keys());
      return within ? { pipeline: storedPipeline(tenantId, within.id) } : {};
    });
    return super.list(handle, tenantId, { ...others, statuses, ...placed }, page);
  }

  update(
    handle: Db,
    actor: Actor,
    id: string,
    input: UpdateLeadInput,
    expected?: ExpectedVersions,
  ): Promise<Stored<LeadObject>> {
    return this.write(handle, actor, id, this.changesOf(input), { expected });
  }

  /** The database checks "an e-mail or a phone" on the row as updated, in the same statement. */
  protected override constraintError(
    error: unknown,
    tenantId: string,
    values: Readonly<Record<string, unknown>>,
  ): unknown {
    if (!isCheckViolation(error, 'leads_contact_required')) return super.constraintError(error, tenantId, values);
    return validationFailed(
      [{ field: 'email', message: fieldMessage('email', fieldMessages.required()) }],
      leadMessages.leadContactRequired,
    );
  }
}
