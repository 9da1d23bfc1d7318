import type { Db } from '../db/database.js';
import { isCheckViolation } from '../db/errors.js';
import type { ExpectedVersions } from '../db/precondition.js';
import { type Actor, RecordService, type Stored } from '../records/record.service.js';
import type { CreateInput, RecordObject, UpdateInput } from '../records/record-fields.js';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { type LeadFields, type LeadFieldTable, type LeadListKeys, leadFields } from './lead.fields.js';
import { leadMessages } from './lead.messages.js';
import { LEAD_EXTERNAL_ID_KEY, leadStore } from './lead.repository.js';

export type CreateLeadInput = CreateInput<LeadFieldTable>;
export type UpdateLeadInput = UpdateInput<LeadFieldTable>;
export type LeadObject = RecordObject<LeadFieldTable>;

export interface LeadServiceOptions {
  /** The field table, when the caller built it already (the routes share it with the schemas). */
  fields?: LeadFields;
  /** The most rows a filtered list page reads (RecordStore.list). */
  scanRows?: number | undefined;
}

/** Every rule of a lead write (SPEC §3): defaults, an e-mail or a phone, the status list, If-Match. */
export class LeadService extends RecordService<LeadFieldTable, LeadListKeys> {
  constructor(db: Db, statuses: readonly string[], options: LeadServiceOptions = {}) {
    const fields = options.fields ?? leadFields(statuses);
    super(leadStore(db, fields, options.scanRows), fields, leadMessages.leadNotFound, statuses, [
      {
        field: 'externalId',
        column: 'externalId',
        constraint: LEAD_EXTERNAL_ID_KEY,
        text: leadMessages.leadExternalIdTaken,
        readScope: 'leads:read',
      },
    ]);
  }

  async create(handle: Db, actor: Actor, input: CreateLeadInput): Promise<Stored<LeadObject>> {
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
    return this.insert(handle, actor.tenantId, { ...values, createdBy: actor.tokenId });
  }

  update(
    handle: Db,
    tenantId: string,
    id: string,
    input: UpdateLeadInput,
    expected?: ExpectedVersions,
  ): Promise<Stored<LeadObject>> {
    return this.write(handle, tenantId, id, this.changesOf(input), { expected });
  }

  /** The database checks "an e-mail or a phone" on the row as updated, in the same statement. */
  protected override async constraintError(
    error: unknown,
    handle: Db,
    tenantId: string,
    values: Readonly<Record<string, unknown>>,
  ): Promise<unknown> {
    if (!isCheckViolation(error, 'leads_contact_required'))
      return super.constraintError(error, handle, tenantId, values);
    return validationFailed(
      [{ field: 'email', message: fieldMessage('email', fieldMessages.required()) }],
      leadMessages.leadContactRequired,
    );
  }
}
