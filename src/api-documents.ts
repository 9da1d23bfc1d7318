import { mcpGuide } from './mcp/mcp-guide.js';

export const EXTERNAL_PREFIX = '/api/external/v1';
export const ADMIN_PREFIX = '/api/admin/v1';

/** What the external API's OpenAPI document says of itself (its operations come from the routes). */
export const EXTERNAL_DOCUMENT = {
  decorator: 'swagger',
  prefix: EXTERNAL_PREFIX,
  title: 'Funil external API',
  description: [
    'Leads and customers of one tenant, for the programs that keep them. JSON in and out; every call carries',
    '`Authorization: Bearer <token>`, and the token names its tenant and its scopes.',
    '',
    'Errors always have the shape `{success: false, error, code, details?}`; `error` is pt-BR unless',
    '`Accept-Language: en`. Every answer carries `X-Request-Id`, and the `RateLimit-*` headers except a 503 shed',
    'before counting, a 404 for a path no route takes, and a 403 for a token refused once it is known (a scope',
    'it lacks, or revoked or expired since it was looked up).',
    '',
    mcpGuide(`${EXTERNAL_PREFIX}/mcp`),
  ].join('\n'),
  security: { name: 'tenantToken', description: 'A tenant token (`fnl_…`), with the scope each operation names.' },
  tags: [
    { name: 'leads', description: 'People and companies that may buy: the sales pipeline.' },
    { name: 'customers', description: 'The central register of customers that other systems keep in sync.' },
    { name: 'pipelines', description: "The tenant's own pipelines: the stages a lead's `status` takes." },
    { name: 'merges', description: 'Merges of duplicate leads or customers, and their undo.' },
    {
      name: 'imports',
      description: 'Files of leads or customers loaded as background jobs: progress, errors by row, revert.',
    },
    { name: 'fields', description: "The tenant's own fields on leads and customers (`custom.<key>`)." },
    { name: 'events', description: 'The change feed: every change of a lead or customer, in commit order.' },
    { name: 'webhooks', description: 'Subscriptions that receive events by HTTP POST, signed, with retries.' },
    { name: 'personal data', description: "A person's access and erasure requests (LGPD, GDPR), by e-mail." },
    {
      name: 'exports',
      description:
        'Leads or customers to a CSV or NDJSON file, made in the background from one snapshot; kept 24 hours.',
    },
    { name: 'token', description: 'What the calling token is: its tenant, its scopes, its expiry.' },
  ],
} as const;

/** What the admin API's OpenAPI document says of itself. */
export const ADMIN_DOCUMENT = {
  decorator: 'adminSwagger',
  prefix: ADMIN_PREFIX,
  title: 'Funil admin API',
  description: 'Tenants and their tokens, for operators. Enabled when FUNIL_ADMIN_TOKEN is set.',
  security: { name: 'adminToken', description: 'The value of FUNIL_ADMIN_TOKEN.' },
  tags: [
    { name: 'tenants', description: 'The accounts Funil serves; each keeps its own leads and customers.' },
    { name: 'tokens', description: "A tenant's bearer tokens: issued with scopes, shown once, revoked." },
  ],
} as const;
