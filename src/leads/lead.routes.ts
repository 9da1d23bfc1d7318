import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { CursorCodec } from '../http/cursor.js';
import { registerRecordRoutes } from '../records/record.routes.js';
import { leadFields } from './lead.fields.js';
import { LeadListQuery, leadListRequest } from './lead.list.js';
import { leadMessages } from './lead.messages.js';
import { LEAD_SORT_KEYS } from './lead.repository.js';
import { leadSchemas } from './lead.schemas.js';
import { LeadService } from './lead.service.js';

interface LeadRoutesOptions {
  db: Db;
  config: Config;
  cursors: CursorCodec;
  /** The most rows a filtered list page reads (RecordStore.list). */
  listScanRows: number | undefined;
}

export const leadRoutes: FastifyPluginAsync<LeadRoutesOptions> = async (app, { db, config, cursors, listScanRows }) => {
  const statuses = config.leadStatuses;
  const fields = leadFields(statuses);
  const schemas = leadSchemas(statuses, fields);
  registerRecordRoutes(app, {
    db,
    cursors,
    service: new LeadService(db, statuses, { fields, scanRows: listScanRows }),
    path: 'leads',
    noun: 'Lead',
    scopes: { read: 'leads:read', write: 'leads:write' },
    notFoundText: leadMessages.leadNotFound,
    schemas: {
      object: schemas.Lead,
      list: schemas.LeadList,
      listQuery: LeadListQuery,
      create: schemas.CreateLead,
      update: schemas.UpdateLead,
      status: schemas.UpdateLeadStatus,
    },
    listRequest: (query) => leadListRequest(query as LeadListQuery, statuses),
    sortKeys: LEAD_SORT_KEYS,
    statusSummary: 'Move a lead to another pipeline stage',
    conflicts: true,
    requiredFieldText: leadMessages.leadRequired,
  });
};
