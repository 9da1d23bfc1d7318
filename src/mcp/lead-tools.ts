import { type TObject, Type } from 'typebox';
import { EventListQuery } from '../events/event.schemas.js';
import { EVENT_TYPES } from '../events/event.service.js';
import { versionsOfIfMatch } from '../http/etag.js';
import { IdParams } from '../http/schemas.js';
import { LEAD_SORT_FIELDS, LeadListQuery, leadListRequest } from '../leads/lead.list.js';
import { leadMessages } from '../leads/lead.messages.js';
import { LEAD_SORT_KEYS } from '../leads/lead.repository.js';
import type { ConvertLeadInput } from '../leads/lead.service.js';
import type { TenantPipelines } from '../pipelines/tenant-pipelines.js';
import type { CursorCodec } from '../records/cursor.js';
import { notFound } from '../shared/errors.js';
import type { McpServices } from './mcp-services.js';
import {
  defineTool,
  IfMatchArgument,
  ifMatchOf,
  type McpTool,
  NextCursor,
  reworded,
  withProperties,
} from './mcp-tool.js';
import { listedWithStages, pipelineArgument, SearchStatuses, stageArgument, stagesArgument } from './pipeline-words.js';
import { answerOf, recordAnswer, recordTools, SEARCH_PAGE } from './record-tools.js';

/** A lead's history a call reads at most, as a search's page. */
const HISTORY_MAX = 100;

/** The seven lead tools of SPEC §19, over the services the REST lead routes call. */
export function leadTools(services: McpServices, cursors: CursorCodec): McpTool[] {
  const { leads, leadSchemas: schemas } = services;
  const sorts = LEAD_SORT_FIELDS.join(', ');
  const lead = recordAnswer('lead', schemas.Lead);

  const [search, get, create, update] = recordTools({
    noun: 'lead',
    scopes: { read: 'leads:read', write: 'leads:write' },
    lister: {
      service: leads,
      listRequest: (query) => leadListRequest(withStatusList(query) as LeadListQuery),
      sortKeys: LEAD_SORT_KEYS,
    },
    cursors,
    schemas: {
      object: schemas.Lead,
      listItem: schemas.LeadListItem,
      create: schemas.CreateLead,
      update: schemas.UpdateLead,
    },
    search: {
      query: LeadListQuery,
      filters: ['q', 'status', 'pipeline', 'source', 'scoreMin', 'scoreMax', 'createdSince', 'updatedSince'],
      words: {
        q: 'Part of the name, e-mail or phone, any case (at least 3 characters).',
        status: 'A stage key, or a list of them (leads at any of them).',
        pipeline: 'Only leads of this pipeline (its id, from list_pipelines).',
        source: 'Where the leads came from, exactly as recorded (e.g. "website", "instagram").',
        createdSince: 'Only leads created at or after this time (ISO 8601, e.g. 2026-11-23T00:00:00Z).',
        updatedSince: 'Only leads changed at or after this time (ISO 8601).',
        sort: `The order: one of ${sorts}; a "-" before it sorts descending (e.g. "-score": highest score first). Default "-createdAt": newest first.`,
      },
      arguments: { status: SearchStatuses },
    },
    requiredFieldText: leadMessages.leadRequired,
    descriptions: {
      search:
        'Find leads: the people and companies in the sales pipelines of this account. Filters combine (all must ' +
        'match): q, status, pipeline, source, score range, creation or change time. Returns {items, nextCursor}: ' +
        'each item is a short lead (_id, name, email, status, score, lastContact, source, createdAt, updatedAt); ' +
        'call get_lead for phone, pipeline, notes and custom fields. A page may hold fewer than `limit` leads, even ' +
        'none, and still have a nextCursor: while nextCursor is not null, more leads may match.',
      get:
        'Read one lead by its _id: every field (name, email, phone, source, pipeline, status, score 0–100, ' +
        'lastContact, notes, externalId, customerId once converted, custom fields, createdAt, updatedAt). Returns ' +
        '{lead, etag}. An unknown id is a not_found error.',
      create:
        'Add a new lead. Requires name, and an email or a phone. It goes to the default pipeline unless `pipeline` ' +
        'names another, at the first stage of that pipeline unless `status` names another of its stages; score ' +
        '(0–100) defaults to 0; source says where the lead came from. `custom` holds values of the fields this ' +
        'account defined for leads, by key. It does not look for duplicates: search_leads first when the person ' +
        'may be there already. Returns {lead, etag}.',
      update:
        'Change some fields of a lead: put only the fields to change in `fields` (the others keep their values; ' +
        'null or "" clears an optional one). To move a lead along its pipeline use set_lead_status; to move it to ' +
        "another pipeline, set `pipeline` (without `status` it lands in that pipeline's first stage); to turn it " +
        'into a customer, convert_lead. Returns {lead, etag}.',
    },
  }) as [McpTool, McpTool, McpTool, McpTool];

  const listedSearch = listedWithStages(
    search,
    (pipelines) => ({
      status: stagesArgument(
        pipelines,
        'A stage key, or a list of them (leads at any of them); with `pipeline`, stages of that pipeline.',
      ),
      pipeline: pipelineArgument(pipelines, 'Only leads of this pipeline (its id).'),
    }),
    (pipelines) =>
      `For "which website leads are still at the first stage since Monday?": status ` +
      `"${pipelines.default.stages[0]?.key}", source "website", createdSince.`,
  );

  const leadPlacement = (pipelines: TenantPipelines, moving: boolean) => ({
    status: stageArgument(
      pipelines,
      moving
        ? "A stage key of the lead's pipeline (of the new `pipeline`, when that changes too)."
        : "A stage key of the lead's pipeline; default: its first stage.",
    ),
    pipeline: pipelineArgument(
      pipelines,
      moving
        ? "Moves the lead to this pipeline (its id); without `status`, to that pipeline's first stage."
        : 'The pipeline the lead goes to (its id); default: the default pipeline.',
    ),
  });
  const listedCreate = listedWithStages(create, (pipelines) => leadPlacement(pipelines, false));
  const fields = update.input.properties.fields as TObject;
  const listedUpdate = listedWithStages(update, (pipelines) => ({
    fields: withProperties(fields, leadPlacement(pipelines, true)),
  }));

  const setStatus = defineTool({
    name: 'set_lead_status',
    title: 'Move a lead to another stage of its pipeline',
    description:
      'Move a lead to another stage of the pipeline it is in, e.g. "mark Ana as contacted". `status` is a stage ' +
      "key of the lead's own pipeline: a stage of another pipeline is a validation_failed error naming `status` " +
      "with the lead's stages (update_lead with `pipeline` moves a lead to another pipeline). Returns {lead, etag}.",
    scope: 'leads:write',
    effect: 'change',
    input: Type.Object(
      { id: IdParams.properties.id, status: schemas.UpdateLeadStatus.properties.status, etag: IfMatchArgument },
      { additionalProperties: false },
    ),
    output: lead,
    async run(call, { id, status, etag }) {
      const expected = versionsOfIfMatch(ifMatchOf(etag));
      return answerOf('lead', await leads.setStatus(call.db, call.actor, id, status, expected));
    },
  });
  const listedSetStatus = listedWithStages(setStatus, (pipelines) => ({
    status: stageArgument(pipelines, "The stage to move the lead to: a stage key of the lead's pipeline."),
  }));

  const convert = defineTool({
    name: 'convert_lead',
    title: 'Turn a lead into a customer',
    description:
      "Turn a lead into a customer (a deal won). In one step: links the customer that has the lead's e-mail, " +
      "or creates one from the lead's name, e-mail and phone and the optional `customer` fields; sets the " +
      "lead's customerId, and moves it to the first stage of kind won of its pipeline (if it has one). The lead " +
      'needs an e-mail. Converting a lead converted already changes nothing and answers the same. Returns {lead, ' +
      'customer, created}: created is true when the customer was new.',
    scope: ['leads:write', 'customers:write', 'customers:read'],
    effect: 'change',
    input: Type.Object(
      { id: IdParams.properties.id, customer: Type.Optional(schemas.ConvertLead) },
      { additionalProperties: false },
    ),
    output: schemas.LeadConversion,
    async run(call, { id, customer }) {
      const conversion = await leads.convert(call.db, call.actor, id, (customer ?? {}) as ConvertLeadInput);
      return { lead: conversion.lead.object, customer: conversion.customer.object, created: conversion.created };
    },
  });

  const { Event } = services.eventSchemas;
  const history = defineTool({
    name: 'lead_history',
    title: "A lead's history",
    description:
      'Every change made to one lead, oldest first: lead.created, lead.updated, lead.status_changed, ' +
      'lead.converted, lead.deleted. Each event has occurredAt, the token that made it (actor.tokenId), the ' +
      'fields it changed (data.changedFields) with their former values (data.previous), and the lead after it ' +
      '(data.object). Also for a deleted lead, while its events are kept. Returns {items, nextCursor}.',
    scope: 'leads:read',
    effect: 'read',
    input: Type.Object(
      {
        id: IdParams.properties.id,
        cursor: reworded(EventListQuery.properties.after, 'The `nextCursor` of the previous result, to read on.'),
        limit: reworded(
          EventListQuery.properties.limit,
          `How many events to return, 1–${HISTORY_MAX} (default ${SEARCH_PAGE}).`,
          { maximum: HISTORY_MAX, default: SEARCH_PAGE },
        ),
      },
      { additionalProperties: false },
    ),
    output: Type.Object({ items: Type.Array(Event), nextCursor: NextCursor }, { additionalProperties: false }),
    async run(call, { id, cursor, limit }) {
      const { events, more } = await services.events.feed(call.db, {
        tenantId: call.tenantId,
        scopes: call.scopes,
        after: cursor,
        types: EVENT_TYPES.lead,
        objectId: id,
        limit: limit ?? SEARCH_PAGE,
      });
      // No event and no lead: an id this tenant never had (or whose events are long gone), as get_lead says.
      if (events.length === 0 && cursor === undefined && !(await leads.lookup(call.db, call.tenantId, id))) {
        throw notFound(leadMessages.leadNotFound);
      }
      return { items: events, nextCursor: more ? (events[events.length - 1]?.id ?? null) : null };
    },
  });

  return [listedSearch, get, listedCreate, listedUpdate, listedSetStatus, convert, history];
}

/** search_leads' `status` as a list, or comma-separated as on REST, as the REST list query takes it. */
function withStatusList(query: Record<string, unknown>): Record<string, unknown> {
  return Array.isArray(query.status) ? { ...query, status: query.status.join(',') } : query;
}
