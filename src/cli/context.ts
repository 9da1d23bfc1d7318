import type { Command } from 'commander';
import { AdminClient } from './admin-client.js';

interface GlobalOptions {
  url: string;
  adminToken?: string;
  json?: boolean;
}

/** What every command needs: a client built from the global options, and the output mode. */
export interface CliContext {
  client: AdminClient;
  json: boolean;
}

/** Reads the program's options from the command being run; fails before any request without an admin token. */
export function contextOf(command: Command): CliContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  return {
    client: new AdminClient({ url: options.url, adminToken: options.adminToken }),
    json: options.json === true,
  };
}
