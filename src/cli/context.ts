import type { Command } from 'commander';
import { ServerClient } from './server-client.js';

interface GlobalOptions {
  url: string;
  adminToken?: string;
  token?: string;
  json?: boolean;
}

/** What every command needs: a client built from the global options, and the output mode. */
export interface CliContext {
  client: ServerClient;
  json: boolean;
}

/** For the admin API (tenants, tokens); fails before any request without an admin token. */
export function contextOf(command: Command): CliContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  return {
    client: new ServerClient({
      url: options.url,
      token: options.adminToken,
      prefix: '/api/admin/v1',
      tokenName: 'admin token',
      tokenHint: 'set FUNIL_ADMIN_TOKEN or pass --admin-token',
    }),
    json: options.json === true,
  };
}

/** For a tenant's own API (imports); fails before any request without a tenant token. */
export function tenantContextOf(command: Command): CliContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  return {
    client: new ServerClient({
      url: options.url,
      token: options.token,
      prefix: '/api/external/v1',
      tokenName: 'tenant token',
      tokenHint: 'set FUNIL_TOKEN or pass --token (a token of the tenant, from `funil tokens create`)',
    }),
    json: options.json === true,
  };
}
