import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { PROCESS_ADMIN_TOKEN, tenantWithToken } from '../helpers/admin-api.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { type ServerProcess, startServer } from '../helpers/server-process.js';
import { migratedDataDir } from '../helpers/test-database.js';
import { buildCli, cleanEnv, interruptWhen, type Run, run } from './cli-process.js';

const ALL = ['leads:read', 'leads:write', 'customers:read', 'customers:write'];

// biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
export type Json = any;

/** A real server with one tenant, the compiled `funil`, and a scratch folder: what a suite of the tenant's commands uses. */
export interface TenantCli {
  readonly tempDir: string;
  readonly server: ServerProcess;
  /** A token of the tenant with the read and write scopes of leads and customers. */
  readonly token: string;
  /** Runs `funil` against the server with the tenant's token in the environment. */
  funil(args: string[], env?: Record<string, string>): Promise<Run>;
  /** Runs `funil` and presses Ctrl-C once `ready` matches what it wrote to `stream`. */
  interrupt(args: string[], stream: 'stdout' | 'stderr', ready: RegExp): Promise<Run>;
  /** A call of the tenant's API that must succeed: its JSON. */
  api(path: string, init?: RequestInit): Promise<Json>;
}

/** Starts the server and builds the CLI before the suite, and removes them after it (node:test hooks). */
export function tenantCli(name: string, tenantName: string): TenantCli {
  let tempDir = '';
  let dataDir = '';
  let server: ServerProcess | undefined;
  let cliMain = '';
  let token = '';
  const env = (extra: Record<string, string> = {}) =>
    cleanEnv({ FUNIL_URL: server?.url ?? '', FUNIL_TOKEN: token, ...extra });

  before(async () => {
    tempDir = await scratchDir(`funil-cli-${name}-`);
    dataDir = await migratedDataDir(`funil-cli-${name}-data-`);
    [server, cliMain] = await Promise.all([
      startServer({ FUNIL_DATA_DIR: dataDir, FUNIL_BOOTSTRAP: 'false', FUNIL_ADMIN_TOKEN: PROCESS_ADMIN_TOKEN }),
      buildCli(join(tempDir, 'package')),
    ]);
    token = (await tenantWithToken(server, tenantName, ALL)).token;
  });

  after(async () => {
    await server?.stop();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  return {
    get tempDir() {
      return tempDir;
    },
    get server() {
      assert.ok(server, 'the server starts before the tests');
      return server;
    },
    get token() {
      return token;
    },
    funil: (args, extra) => run(process.execPath, [cliMain, ...args], env(extra)),
    interrupt: (args, stream, ready) => interruptWhen(process.execPath, [cliMain, ...args], env(), stream, ready),
    async api(path, init = {}) {
      const answer = await fetch(`${server?.url}/api/external/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
      });
      assert.ok(answer.ok, `${path}: HTTP ${answer.status}`);
      return answer.json();
    },
  };
}
