import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const INSPECTOR = new URL(
  '../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
  import.meta.url,
).pathname;

export interface InspectorRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The official MCP Inspector's CLI, a process of its own, run once against `url` with a bearer
 * token; its answer as one JSON object on stdout. It keeps a catalog under HOME: a scratch one here.
 */
export async function runInspector(url: URL, token: string, args: readonly string[]): Promise<InspectorRun> {
  const home = await mkdtemp(join(tmpdir(), 'funil-inspector-'));
  try {
    const argv = [INSPECTOR, '--cli', url.href, '--transport', 'http', '--header', `Authorization: Bearer ${token}`];
    return await new Promise((resolve) => {
      execFile(
        process.execPath,
        [...argv, '--format', 'json', ...args],
        { env: { PATH: process.env.PATH ?? '', HOME: home }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
