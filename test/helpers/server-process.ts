import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from './free-port.js';

export { freePort };

export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Sends SIGTERM and waits for the exit (SIGKILL after `graceMs`); resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  /** Resolves with the exit code once the process has ended by itself. */
  exited(): Promise<number | null>;
}

const SERVER_ENTRY = new URL('../../src/server.ts', import.meta.url).pathname;

/** Starts `src/server.ts` as a real process; waits until /health answers unless `waitReady` is false. */
export async function startServer(
  env: Record<string, string>,
  { waitReady = true, timeoutMs = 60_000 } = {},
): Promise<ServerProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_ENTRY], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      // A busy test machine lags the event loop: no shedding unless a suite asks for it (test/faults/overload).
      FUNIL_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
  });
  const url = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    url,
    pid: child.pid ?? -1,
    child,
    output: () => output,
    exited: () => exit,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exit;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  if (waitReady) await waitForHealth(server, timeoutMs);
  return server;
}

async function waitForHealth(server: ServerProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) {
      throw new Error(`server exited with ${server.child.exitCode}:\n${server.output()}`);
    }
    try {
      const response = await fetch(`${server.url}/health`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await server.stop(1_000);
  throw new Error(`server not ready within ${timeoutMs} ms:\n${server.output()}`);
}

/** The demo token a first start prints, if any. */
export function printedToken(output: string): string | undefined {
  return output.match(/\bfnl_[A-Za-z0-9_-]{43,}\b/)?.[0];
}
