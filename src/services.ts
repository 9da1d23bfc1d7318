import type { Config } from './config.js';
import { customerFields } from './customers/customer.fields.js';
import { Customer } from './customers/customer.schemas.js';
import { CustomerService } from './customers/customer.service.js';
import type { Db } from './db/database.js';
import { eventSchemas } from './events/event.schemas.js';
import { EventService } from './events/event.service.js';
import { CustomFieldCatalog } from './fields/custom-field-catalog.js';
import { type LeadFields, leadFields } from './leads/lead.fields.js';
import { leadSchemas } from './leads/lead.schemas.js';
import { LeadService } from './leads/lead.service.js';

/**
 * The services behind every way into a tenant's data: the REST routes and the MCP tools call the
 * same instances, so a rule, an event or a cache (the tenants' own fields) is the same for both.
 */
export interface Services {
  /**
   * The database's own handle, for work of no request (retention, bookkeeping). A request's work
   * runs on `request.db`, which every service method takes as its first argument.
   */
  readonly db: Db;
  /** FUNIL_LEAD_STATUSES, in pipeline order. */
  readonly leadStatuses: readonly string[];
  readonly leadFields: LeadFields;
  readonly leadSchemas: ReturnType<typeof leadSchemas>;
  /** SPEC §14's event, with this deployment's lead (its statuses) and the customer. */
  readonly eventSchemas: ReturnType<typeof eventSchemas>;
  readonly leads: LeadService;
  readonly customers: CustomerService;
  readonly events: EventService;
  /** One copy of each tenant's fields, which the routes that change them keep current. */
  readonly catalog: CustomFieldCatalog;
}

/** `listScanRows`: the most rows a filtered list page reads (RecordStore.list). */
export function buildServices(db: Db, config: Config, listScanRows: number | undefined): Services {
  const leadStatuses = config.leadStatuses;
  const fields = leadFields(leadStatuses);
  const catalog = new CustomFieldCatalog();
  const customers = new CustomerService(db, listScanRows, catalog);
  const schemas = leadSchemas(leadStatuses, fields);
  const leads = new LeadService(db, leadStatuses, { fields, scanRows: listScanRows, catalog, customers });
  customers.onDelete = (trx, actor, id) => leads.unlinkCustomer(trx, actor, id);
  return {
    db,
    leadStatuses,
    leadFields: fields,
    leadSchemas: schemas,
    eventSchemas: eventSchemas(schemas.Lead, Customer),
    leads,
    customers,
    events: new EventService({ lead: fields, customer: customerFields }),
    catalog,
  };
}
