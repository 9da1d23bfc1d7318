import { type Command, InvalidArgumentError } from 'commander';
import { contextOf } from './context.js';
import { fields, printJson, printLines, table, when } from './output.js';

// Written out: the CLI is a package of its own (src/cli), which does not import the server's code.
const SCOPES_HELP =
  'leads:read, leads:write, leads:create, customers:read, customers:write, webhooks:read, webhooks:write, fields:write, ' +
  'privacy:read, privacy:write, pipelines:write';

interface TokenFields {
  id: string;
  name: string;
  scopes: string[];
  tenant: string;
  expiresAt: string | null;
  createdAt: string;
}

/** POST /tenants/:id/tokens answer: the only place the plain token ever appears (SPEC §9). */
export interface CreatedToken extends TokenFields {
  token: string;
}

export interface TokenSummary extends TokenFields {
  prefix: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface CreateOptions {
  name: string;
  scopes: string[];
  expiresAt?: string;
}

export function registerTokenCommands(tokens: Command): void {
  tokens
    .command('create')
    .description('create an API token for a tenant; the token is shown only once')
    .argument('<tenantId>', 'id of the tenant')
    .requiredOption('--name <name>', 'what the token is for, e.g. "website form"')
    .requiredOption('--scopes <list>', `comma-separated scopes: ${SCOPES_HELP}`, parseList)
    .option('--expires-at <timestamp>', 'ISO 8601 expiry, e.g. 2027-01-01T00:00:00Z (default: never)')
    .action(async (tenantId: string, options: CreateOptions, command: Command) => {
      const ctx = contextOf(command);
      const created = await ctx.client.post<CreatedToken>(`/tenants/${encodeURIComponent(tenantId)}/tokens`, {
        name: options.name,
        scopes: options.scopes,
        ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
      });
      if (ctx.json) return printJson(created);
      printLines(
        `Created token "${created.name}".`,
        fields([
          ['id', created.id],
          ['tenant', created.tenant],
          ['scopes', created.scopes.join(',')],
          ['expires', created.expiresAt ? when(created.expiresAt) : 'never'],
        ]),
        '',
        'Token (shown only this once; store it now, it cannot be read again):',
        '',
        `  ${created.token}`,
        '',
      );
    });

  tokens
    .command('list')
    .description("list a tenant's tokens (never the tokens themselves: their first characters only)")
    .argument('<tenantId>', 'id of the tenant')
    .action(async (tenantId: string, _options: unknown, command: Command) => {
      const ctx = contextOf(command);
      const list = await ctx.client.get<TokenSummary[]>(`/tenants/${encodeURIComponent(tenantId)}/tokens`);
      if (ctx.json) return printJson(list);
      if (list.length === 0) return printLines('This tenant has no tokens.');
      const now = Date.now();
      printLines(
        table(
          ['id', 'name', 'prefix', 'scopes', 'status', 'expires', 'last used'],
          list.map((t) => [
            t.id,
            t.name,
            `${t.prefix}…`,
            t.scopes.join(','),
            statusOf(t, now),
            t.expiresAt ? when(t.expiresAt) : 'never',
            when(t.lastUsedAt),
          ]),
        ),
      );
    });

  tokens
    .command('revoke')
    .description('revoke a token: it is refused from then on')
    .argument('<tokenId>', 'id of the token')
    .action(async (tokenId: string, _options: unknown, command: Command) => {
      const ctx = contextOf(command);
      const answer = await ctx.client.delete<{ success: true }>(`/tokens/${encodeURIComponent(tokenId)}`);
      if (ctx.json) return printJson(answer);
      printLines(`Revoked token ${tokenId}.`);
    });
}

function parseList(value: string): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError(`give at least one of: ${SCOPES_HELP}`);
  return items;
}

function statusOf(token: TokenSummary, now: number): string {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && Date.parse(token.expiresAt) <= now) return 'expired';
  return 'active';
}
