/** Each tool in one line, for people: the /docs page's guide and the README show these. */
export const TOOL_SUMMARIES: Readonly<Record<string, readonly [scope: string, summary: string]>> = {
  search_leads: [
    'leads:read',
    'leads by text, status, pipeline, source, score, creation or change time; pages by `nextCursor`',
  ],
  get_lead: ['leads:read', 'one lead, every field, with its `etag`'],
  create_lead: ['leads:write', 'a new lead (name, and an e-mail or a phone), in a pipeline of your choice'],
  update_lead: ['leads:write', 'some fields of a lead, optionally only if its `etag` still matches'],
  set_lead_status: ['leads:write', 'moves a lead to another stage of its pipeline'],
  convert_lead: [
    'leads:write + customers:write + customers:read',
    'turns a lead into a customer, or links the one with its e-mail',
  ],
  lead_history: ['leads:read', "a lead's changes, oldest first (the change feed's events)"],
  find_duplicates: [
    'leads:read',
    'groups of leads that share an e-mail or a phone, largest first (pages by `nextCursor`); or, given `id`, the leads sharing one with that lead',
  ],
  merge_leads: [
    'leads:read + leads:write',
    'merges leads into one and deletes the others (`dryRun` first); undone only by REST `POST /merges/{id}/undo`',
  ],
  list_pipelines: ['leads:read', "the account's pipelines, each with its stages (key, label, kind) in order"],
  pipeline_summary: ['leads:read', "one pipeline's leads of a period by stage, by source and per day"],
  search_customers: ['customers:read', 'customers by text, e-mail, status, type, creation or change time'],
  get_customer: ['customers:read', 'one customer, with its `etag`'],
  create_customer: ['customers:write', 'a new customer (name and a free e-mail)'],
  update_customer: ['customers:write', 'some fields of a customer, optionally only if its `etag` still matches'],
};

/** The MCP section of the external API's description, which /docs shows. */
export function mcpGuide(path: string): string {
  return [
    '## AI assistants (MCP)',
    '',
    `\`POST ${path}\` is a [Model Context Protocol](https://modelcontextprotocol.io) server for AI assistants:`,
    'Streamable HTTP, stateless, JSON answers, protocol versions 2025-06-18, 2025-11-25 and 2026-07-28. It takes the tokens',
    "of this API, with its scopes, rate limit and tenant walls; its writes are this API's writes, with their",
    `events. Point a client at \`https://<host>${path}\` with the header \`Authorization: Bearer <token>\`;`,
    "without a usable token the answer is a 401 with `WWW-Authenticate: Bearer`. The token's scopes decide",
    "which tools `tools/list` shows; their descriptions and `status` arguments name the tenant's own pipeline",
    'stages. A write takes an optional `idempotencyKey`; a failure is a tool result with `isError: true` and the',
    'error body described above as `structuredContent`.',
    '',
    '| tool | scope | what it does |',
    '|---|---|---|',
    ...Object.entries(TOOL_SUMMARIES).map(([name, [scope, summary]]) => `| \`${name}\` | ${scope} | ${summary} |`),
  ].join('\n');
}
