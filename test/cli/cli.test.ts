import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SCOPES } from '../../src/auth/scopes.js';
import { freePort } from '../helpers/free-port.js';
import { SERVER_ARGS } from '../helpers/module-args.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { migratedDataDir } from '../helpers/test-database.js';
import { buildCli, cleanEnv, ROOT, type Run, run } from './cli-process.js';

const ADMIN_TOKEN = 'cli-test-admin-token-0123456789abcdef0123';
const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';
const ONE_LINE = /^funil: [^\n]+\n$/;

/** A real Funil server process on PGlite in a temp dir. */
class FunilServer {
  readonly url: string;
  #child?: ChildProcess;
  #output = '';

  constructor(
    readonly port: number,
    private readonly dataDir: string,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, SERVER_ARGS, {
      cwd: ROOT,
      env: cleanEnv({
        PORT: String(this.port),
        HOST: '127.0.0.1',
        FUNIL_DATA_DIR: this.dataDir,
        FUNIL_ADMIN_TOKEN: ADMIN_TOKEN,
        FUNIL_BOOTSTRAP: 'false',
        LOG_LEVEL: 'warn',
        // The suites share two busy cores: a lagging event loop must not shed the CLI's requests
        // (a 503 "overloaded" failed this file once). Load shedding has tests of its own.
        FUNIL_MAX_EVENT_LOOP_DELAY_MS: '0',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.#output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.#output += chunk));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${this.#output}`);
      try {
        if ((await fetch(`${this.url}/health`)).ok) return;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`server not ready within 30 s:\n${this.#output}`);
  }

  /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

describe('funil CLI (SPEC §12, §9)', () => {
  let tempDir: string;
  let dataDir: string;
  let server: FunilServer;
  let serverReady: Promise<void>;
  let cliMain: string;

  /** Runs the compiled `funil` against the test server, with the admin token in the environment. */
  function funil(args: string[], env: Record<string, string> = {}): Promise<Run> {
    const base = { FUNIL_URL: server.url, FUNIL_ADMIN_TOKEN: ADMIN_TOKEN };
    return run(process.execPath, [cliMain, ...args], cleanEnv({ ...base, ...env }));
  }

  /** Runs `funil` and expects success with nothing on stderr. */
  async function ok(args: string[]): Promise<string> {
    const result = await funil(args);
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    return result.stdout;
  }

  /** Runs `funil` and expects exit code 1 with exactly one `funil: ...` line on stderr and nothing on stdout. */
  async function fails(args: string[], env: Record<string, string> = {}): Promise<string> {
    const result = await funil(args, env);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, ONE_LINE);
    assert.equal(result.stdout, '');
    return result.stderr;
  }

  async function createLead(token: string): Promise<number> {
    const response = await fetch(`${server.url}/api/external/v1/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Maria Silva', email: 'maria@example.com' }),
    });
    await response.arrayBuffer();
    return response.status;
  }

  before(async () => {
    tempDir = await scratchDir('funil-cli-');
    dataDir = await migratedDataDir('funil-cli-data-');
    server = new FunilServer(await freePort(), dataDir);
    // Even on a migrated copy the start takes a moment: the tests that need no server go first.
    serverReady = server.start();
    serverReady.catch(() => {});
    cliMain = await buildCli(join(tempDir, 'package'));
  });

  after(async () => {
    await server?.stop();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('prints help and the version, exit code 0', async () => {
    const [help, version, tenantsHelp] = await Promise.all([
      funil(['--help']),
      funil(['--version']),
      funil(['tenants', '--help']),
    ]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: funil /);
    for (const text of ['tenants', 'tokens', '--url', '--admin-token', '--json']) assert.ok(help.stdout.includes(text));
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(version.code, 0);
    assert.equal(version.stdout, `${pkg.version}\n`);
    assert.equal(tenantsHelp.code, 0);
    for (const command of ['create', 'list', 'disable', 'enable'])
      assert.match(tenantsHelp.stdout, new RegExp(command));
    // The CLI writes the scopes out (it imports none of the server's code): every one the server has.
    const tokensHelp = await funil(['tokens', 'create', NO_SUCH_ID, '--help']);
    const listed = tokensHelp.stdout.replace(/\s+/g, ' ');
    for (const scope of SCOPES) assert.ok(listed.includes(scope), `${scope} in: ${listed}`);
  });

  it('reports an unknown command or option on one line with a non-zero exit', async () => {
    const [command, option, missing] = await Promise.all([
      funil(['tenant', 'list']),
      funil(['tenants', 'list', '--bogus']),
      funil(['tokens', 'create', NO_SUCH_ID, '--scopes', 'leads:read']),
    ]);
    for (const result of [command, option, missing]) {
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, ONE_LINE);
      assert.equal(result.stdout, '');
    }
    assert.match(command.stderr, /unknown command 'tenant'/);
    assert.match(option.stderr, /unknown option '--bogus'/);
    assert.match(missing.stderr, /--name/);
  });

  it('says the admin token is missing before making any request', async () => {
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    const stderr = await fails(['tenants', 'list'], { FUNIL_URL: unreachable, FUNIL_ADMIN_TOKEN: '' });
    // Had it called the server, the error would be "cannot reach".
    assert.match(stderr, /^funil: no admin token: set FUNIL_ADMIN_TOKEN or pass --admin-token\n$/);
  });

  it('says when the server cannot be reached', async () => {
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    const stderr = await fails(['tenants', 'list'], { FUNIL_URL: unreachable });
    assert.equal(stderr, `funil: cannot reach ${unreachable}: ECONNREFUSED\n`);
  });

  it('warns before sending the admin token over plain http to a host other than this one', async () => {
    const port = await freePort();
    // 0.0.0.0 is this machine to the kernel, but not a name the CLI takes for loopback.
    const remote = await funil(['tenants', 'list'], { FUNIL_URL: `http://0.0.0.0:${port}` });
    assert.equal(remote.code, 1);
    assert.match(
      remote.stderr,
      /^funil: warning: sending the admin token in the clear to 0\.0\.0\.0:\d+ \(plain http\)/,
    );
    const local = await funil(['tenants', 'list'], { FUNIL_URL: `http://localhost:${port}` });
    assert.doesNotMatch(local.stderr, /warning/);
  });

  it('runs as a bin (shebang) and from the TypeScript source through tsx', async () => {
    assert.equal((await readFile(cliMain, 'utf8')).split('\n')[0], '#!/usr/bin/env node');
    const help = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '--help'], cleanEnv({}));
    assert.equal(help.stderr, '');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: funil /);
  });

  it('waits for the server', async () => {
    await serverReady;
  });

  it('refuses a wrong admin token (403), from the env or --admin-token', async () => {
    const [fromEnv, fromOption] = await Promise.all([
      fails(['tenants', 'list'], { FUNIL_ADMIN_TOKEN: 'not-the-admin-token-0123456789abcdef' }),
      fails(['tenants', 'list', '--admin-token', 'not-the-admin-token-0123456789abcdef']),
    ]);
    assert.equal(fromEnv, 'funil: Invalid admin token. (forbidden)\n');
    assert.equal(fromOption, fromEnv);
  });

  let tenantId: string;

  it('creates a tenant and lists it, for people and with --json', async () => {
    const created = JSON.parse(await ok(['tenants', 'create', 'Acme Ltda', '--json']));
    assert.deepEqual(Object.keys(created).sort(), ['active', 'createdAt', 'id', 'name', 'phoneCountry', 'updatedAt']);
    assert.equal(created.phoneCountry, 'BR');
    assert.equal(created.name, 'Acme Ltda');
    assert.equal(created.active, true);
    tenantId = created.id;

    const human = await ok(['tenants', 'create', 'Beta Comércio']);
    assert.match(human, /^Created tenant "Beta Comércio"\.\n/);
    assert.match(human, /\n {2}id +[0-9a-f-]{36}\n/);

    const list = JSON.parse(await ok(['tenants', 'list', '--json']));
    assert.deepEqual(
      list.find((t: { id: string }) => t.id === tenantId),
      created,
    );
    assert.deepEqual(list.map((t: { name: string }) => t.name).sort(), ['Acme Ltda', 'Beta Comércio']);

    const table = (await ok(['tenants', 'list'])).trimEnd().split('\n');
    assert.match(table[0] ?? '', /^ID +NAME +STATUS +CREATED$/);
    assert.equal(table.length, 3);
    assert.match(table.find((line) => line.startsWith(tenantId)) ?? '', / {2}Acme Ltda +active +\d{4}-\d\d-\d\d /);
  });

  let token: string;
  let tokenId: string;

  it('creates a token with scopes, printed once, that works on the external API', async () => {
    const human = await ok([
      'tokens',
      'create',
      tenantId,
      '--name',
      'website form',
      '--scopes',
      'leads:read,leads:write',
    ]);
    assert.match(human, /shown only this once/);
    const match = /\n {2}(fnl_\S+)\n/.exec(human);
    assert.ok(match?.[1], human);
    token = match[1];
    tokenId = /\n {2}id +([0-9a-f-]{36})\n/.exec(human)?.[1] ?? '';
    assert.match(human, /\n {2}scopes +leads:read,leads:write\n/);
    assert.equal(await createLead(token), 201);

    const json = JSON.parse(
      await ok(['tokens', 'create', tenantId, '--name', 'reader', '--scopes', 'leads:read', '--json']),
    );
    assert.deepEqual(json.scopes, ['leads:read']);
    assert.equal(json.tenant, tenantId);
    assert.equal(json.expiresAt, null);
    assert.match(json.token, /^fnl_/);
    // The CLI sent exactly the scopes asked for: this one may not write.
    assert.equal(await createLead(json.token), 403);
  });

  it('passes --expires-at through', async () => {
    const expiresAt = '2099-01-02T03:04:05.000Z';
    const created = JSON.parse(
      await ok([
        'tokens',
        'create',
        tenantId,
        '--name',
        'until 2099',
        '--scopes',
        'leads:read',
        '--expires-at',
        expiresAt,
        '--json',
      ]),
    );
    assert.equal(created.expiresAt, expiresAt);
  });

  it('lists tokens with their prefix, never the token itself', async () => {
    const list = JSON.parse(await ok(['tokens', 'list', tenantId, '--json']));
    assert.equal(list.length, 3);
    const mine = list.find((t: { id: string }) => t.id === tokenId);
    assert.equal(mine.prefix, token.slice(0, 8));
    assert.equal(mine.revokedAt, null);
    assert.ok(list.every((t: object) => !('token' in t)));

    const human = await ok(['tokens', 'list', tenantId]);
    assert.ok(!human.includes(token));
    const lines = human.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^ID +NAME +PREFIX +SCOPES +STATUS +EXPIRES +LAST USED$/);
    const row = lines.find((line) => line.startsWith(tokenId)) ?? '';
    assert.match(row, new RegExp(` {2}website form +${token.slice(0, 8)}… +leads:read,leads:write +active +never `));
  });

  it('revokes a token: it gets 403 right after', async () => {
    assert.equal(await ok(['tokens', 'revoke', tokenId]), `Revoked token ${tokenId}.\n`);
    assert.equal(await createLead(token), 403);
    const human = await ok(['tokens', 'list', tenantId]);
    assert.match(human.split('\n').find((line) => line.startsWith(tokenId)) ?? '', / revoked /);
    assert.equal(await fails(['tokens', 'revoke', NO_SUCH_ID]), 'funil: Token not found. (not_found)\n');
  });

  it('disables a tenant (its tokens get 403) and enables it again (they work again)', async () => {
    const created = JSON.parse(
      await ok(['tokens', 'create', tenantId, '--name', 'crm', '--scopes', 'leads:write', '--json']),
    );
    assert.equal(await createLead(created.token), 201);

    assert.match(await ok(['tenants', 'disable', tenantId]), /^Disabled tenant "Acme Ltda"/);
    assert.equal(await createLead(created.token), 403);
    const list = JSON.parse(await ok(['tenants', 'list', '--json']));
    assert.equal(list.find((t: { id: string }) => t.id === tenantId).active, false);
    assert.match((await ok(['tenants', 'list'])).split('\n').find((l) => l.startsWith(tenantId)) ?? '', / disabled /);

    const enabled = JSON.parse(await ok(['tenants', 'enable', tenantId, '--json']));
    assert.equal(enabled.active, true);
    assert.equal(await createLead(created.token), 201);
  });

  it('renames a tenant', async () => {
    assert.equal(await ok(['tenants', 'rename', tenantId, 'Acme SA']), `Renamed tenant ${tenantId} to "Acme SA".\n`);
    const list = JSON.parse(await ok(['tenants', 'list', '--json']));
    assert.equal(list.find((t: { id: string }) => t.id === tenantId).name, 'Acme SA');
  });

  it("sets the country a tenant's phones are read in (SPEC §21)", async () => {
    assert.equal(
      await ok(['tenants', 'phone-country', tenantId, 'pt']),
      `Tenant "Acme SA" (${tenantId}) reads phones without a +code as PT.\n`,
    );
    const list = JSON.parse(await ok(['tenants', 'list', '--json']));
    assert.equal(list.find((t: { id: string }) => t.id === tenantId).phoneCountry, 'PT');
    const made = JSON.parse(await ok(['tenants', 'create', 'Boston Inc', '--phone-country', 'US', '--json']));
    assert.equal(made.phoneCountry, 'US');
    const refused = await fails(['tenants', 'phone-country', tenantId, 'XX']);
    assert.match(refused, /phoneCountry/);
  });

  it('reports an unknown tenant (404) on one line', async () => {
    const results = await Promise.all([
      fails(['tenants', 'disable', NO_SUCH_ID]),
      fails(['tokens', 'list', NO_SUCH_ID]),
      fails(['tokens', 'create', NO_SUCH_ID, '--name', 'x', '--scopes', 'leads:read']),
      fails(['tenants', 'enable', 'not-a-uuid']),
    ]);
    for (const stderr of results) assert.equal(stderr, 'funil: Tenant not found. (not_found)\n');
  });

  it('reports a bad scope or expiry with the API message, and creates nothing', async () => {
    const [scope, expiry] = await Promise.all([
      fails(['tokens', 'create', tenantId, '--name', 'x', '--scopes', 'leads:read,leads:delete']),
      fails([
        'tokens',
        'create',
        tenantId,
        '--name',
        'x',
        '--scopes',
        'leads:read',
        '--expires-at',
        '2020-01-01T00:00:00Z',
      ]),
    ]);
    assert.match(scope, /^funil: Field 'scopes\.1': must be one of: .*leads:write.* \(validation_failed\)\n$/);
    assert.match(expiry, /expiresAt.* \(validation_failed\)\n$/);
    assert.equal(JSON.parse(await ok(['tokens', 'list', tenantId, '--json'])).length, 4);
  });
});
