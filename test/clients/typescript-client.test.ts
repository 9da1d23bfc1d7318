import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { printedToken, type ServerProcess, startServer } from '../helpers/server-process.js';
import { migratedDataDir } from '../helpers/test-database.js';

const run = promisify(execFile);
const EXAMPLE = new URL('../../clients/typescript/examples/create-and-list.ts', import.meta.url).pathname;

describe('the generated TypeScript client (clients/typescript)', () => {
  let dataDir: string;
  let server: ServerProcess;
  let token: string;

  before(async () => {
    dataDir = await migratedDataDir('funil-client-');
    server = await startServer({ FUNIL_DATA_DIR: dataDir });
    token = printedToken(server.output()) ?? '';
  });
  after(async () => {
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs its example against a real server: creates a lead, then lists it', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', EXAMPLE], {
      env: { PATH: process.env.PATH ?? '', FUNIL_URL: server.url, FUNIL_TOKEN: token },
      timeout: 30_000,
    });
    const id = stdout.match(/created lead ([0-9a-f-]{36}) \(status new\)/)?.[1];
    assert.ok(id, stdout);
    assert.match(stdout, new RegExp(`${id}  Maria Silva  maria@example.com`));
    const read = await fetch(`${server.url}/api/external/v1/leads/${id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(((await read.json()) as { source: string }).source, 'example script');
  });

  it('reports an API error on one line and exits non-zero', async () => {
    await assert.rejects(
      run(process.execPath, ['--import', 'tsx', EXAMPLE], {
        env: { PATH: process.env.PATH ?? '', FUNIL_URL: server.url, FUNIL_TOKEN: `fnl_${'x'.repeat(43)}` },
        timeout: 30_000,
      }),
      (error: { code: number; stderr: string }) => {
        assert.equal(error.code, 1);
        assert.equal(error.stderr.trim(), 'could not create the lead: Invalid access token. (forbidden)');
        return true;
      },
    );
  });
});
