import { Type } from 'typebox';
import { type DuplicateRecords, duplicateGroupPage, duplicatesOfRecord } from '../duplicates/duplicate.list.js';
import { DuplicateGroupList, DuplicateGroupsQuery, duplicatesOfSchema } from '../duplicates/duplicate.schemas.js';
import { versionsOfIfMatch } from '../http/etag.js';
import { IdParams } from '../http/schemas.js';
import { leadMessages } from '../leads/lead.messages.js';
import { MergeBody, mergeAnswer } from '../merges/merge.schemas.js';
import type { CursorCodec } from '../records/cursor.js';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, type Text } from '../shared/messages.js';
import type { McpServices } from './mcp-services.js';
import { defineTool, IfMatchArgument, ifMatchOf, type McpTool, NextCursor, reworded } from './mcp-tool.js';
import { SEARCH_PAGE } from './record-tools.js';

/** SPEC §19: a call reads at most 100 groups, as a search reads 100 leads. */
const GROUPS_MAX = 100;

const onlyWithoutId: Text = {
  pt: 'vale só para os grupos, sem id',
  en: 'applies to the groups only, without id',
};

/** SPEC §21 through MCP: find_duplicates and merge_leads, over what GET /leads/duplicates and POST /leads/merge call. */
export function duplicateTools(services: McpServices, cursors: CursorCodec): McpTool[] {
  const { leads, leadSchemas: schemas } = services;
  const leadRecords: DuplicateRecords = {
    table: 'leads',
    notFoundText: leadMessages.leadNotFound,
    lookupMany: (handle, tenantId, ids) => leads.lookupMany(handle, tenantId, ids),
  };
  const query = DuplicateGroupsQuery.properties;

  const find = defineTool({
    name: 'find_duplicates',
    title: 'Find duplicate leads',
    description:
      'Find leads that are probably the same person: they share an e-mail (compared trimmed, in lower case, ' +
      'without a +tag, Gmail without dots) or a phone (compared in international form). Without `id`: the groups ' +
      'of leads sharing a key, largest first, as {items, nextCursor}; each item is {key: {kind: "email" or ' +
      '"phone", value}, count, ids} (ids: the first 100). With `id`: the leads sharing a key with that lead, as ' +
      '{items}, each {matchedOn: the keys it shares, record: the whole lead}, newest first, at most 100. Read ' +
      'the leads with get_lead before proposing a merge, and merge them with merge_leads only once the person ' +
      'agrees: a shared e-mail or phone is a hint, not proof (a family or a company may share one).',
    scope: 'leads:read',
    effect: 'read',
    input: Type.Object(
      {
        id: reworded(
          IdParams.properties.id,
          'Optional: a lead’s _id, to list the leads sharing its e-mail or phone instead of the groups.',
        ),
        kind: reworded(query.kind, 'Only groups sharing an e-mail ("email") or a phone ("phone"); default: both.'),
        limit: reworded(query.limit, `How many groups to return, 1–${GROUPS_MAX} (default ${SEARCH_PAGE}).`, {
          maximum: GROUPS_MAX,
          default: SEARCH_PAGE,
        }),
        cursor: reworded(
          query.cursor,
          'The `nextCursor` of the previous result, to read the next page of groups; send the same `kind` with it.',
        ),
      },
      { additionalProperties: false },
    ),
    output: Type.Union([
      Type.Object({ items: DuplicateGroupList, nextCursor: NextCursor }, { additionalProperties: false }),
      Type.Object({ items: duplicatesOfSchema(schemas.Lead) }, { additionalProperties: false }),
    ]),
    async run(call, { id, kind, limit, cursor }) {
      if (id === undefined) {
        const page = { kind, limit: limit ?? SEARCH_PAGE, cursor };
        const { items, next } = await duplicateGroupPage(call.db, cursors, 'leads', call.tenantId, page);
        return { items, nextCursor: next ?? null };
      }
      const stray = Object.entries({ kind, limit, cursor }).find(([, value]) => value !== undefined);
      if (stray) throw validationFailed([{ field: stray[0], message: fieldMessage(stray[0], onlyWithoutId) }]);
      return { items: await duplicatesOfRecord(call.db, leadRecords, call.tenantId, id) };
    },
  });

  const merge = defineTool({
    name: 'merge_leads',
    title: 'Merge duplicate leads into one',
    description:
      'Merge duplicate leads (see find_duplicates) into one. The target (targetId) is kept; the sources ' +
      '(sourceIds, 1–10) are DELETED. Field by field, the target keeps the value of the lead that `fields` ' +
      `chooses (a field, or custom.<key>, → that lead's _id; the fields: ${leads.mergeFields.join(', ')}), ` +
      'else its own value, else the value of the most recently updated source that has one; pipeline and status ' +
      'come together from one lead. ALWAYS call it first with dryRun: true, which writes nothing and returns the ' +
      'lead the merge would make: show the person that lead and which leads would be deleted, and call again ' +
      'with the same arguments and without dryRun only once they agree. `etag` (the target’s, from get_lead) ' +
      'merges only if the target has not changed since. Returns {merge, record}: merge.id (null on a dry run) ' +
      'and the target lead as merged. A merge can be undone, the sources restored with their ids and values, ' +
      'through the REST API only (no tool does it): POST /merges/{merge.id}/undo, for as long as the account ' +
      "keeps events, which keep the sources' history (lead_history reads it). A source that is gone, or another " +
      "account's, is a not_found error.",
    scope: ['leads:read', 'leads:write'],
    effect: 'delete',
    input: Type.Object({ ...MergeBody.properties, etag: IfMatchArgument }, { additionalProperties: false }),
    output: mergeAnswer(schemas.Lead),
    async run(call, { etag, ...input }) {
      const expected = versionsOfIfMatch(ifMatchOf(etag));
      const { merge, record } = await services.merges.merge('lead', call.db, call.actor, input, expected);
      return { merge, record: record.object };
    },
  });

  return [find, merge];
}
