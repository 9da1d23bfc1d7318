import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { freePort } from './free-port.js';
import { SERVER_ARGS } from './module-args.js';

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

/** How to launch a server process: the tests' `startServer` and the benches' both come here. */
export interface LaunchSpec {
  /** Its whole environment; PORT and HOST are added. */
  readonly env: Record<string, string>;
  /** Arguments to `node`: src/server of the tree the tests run from unless given (a bench runs a build). */
  readonly args?: readonly string[];
  /** The Node.js binary; this process's unless given. */
  readonly node?: string;
  readonly cwd?: string;
  /** Where its stdout and stderr go; kept in memory unless given. */
  readonly logFile?: string;
  readonly port?: number;
}

/** How often a server is started again on another port when a process beside took its port first. */
const PORT_ATTEMPTS = 3;

/** Starts a server process; waits until /health answers unless `waitReady` is false. Stopped by its PID. */
export async function launchServer(
  spec: LaunchSpec,
  options: { waitReady?: boolean; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const given = spec.port ?? (spec.env.PORT ? Number(spec.env.PORT) : undefined);
  if (given !== undefined) return launchOn(spec, given, options);
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchOn(spec, await freePort(), options);
    } catch (error) {
      // Another test process drew the same port in the same second: its server listens there.
      if (attempt >= PORT_ATTEMPTS || !String(error).includes('EADDRINUSE')) throw error;
    }
  }
}

async function launchOn(
  spec: LaunchSpec,
  port: number,
  { waitReady = true, timeoutMs = 60_000 } = {},
): Promise<ServerProcess> {
  const log = spec.logFile === undefined ? undefined : openSync(spec.logFile, 'w');
  let child: ChildProcess;
  try {
    child = spawn(spec.node ?? process.execPath, [...(spec.args ?? SERVER_ARGS)], {
      cwd: spec.cwd,
      env: { ...spec.env, HOST: '127.0.0.1', PORT: String(port) },
      stdio: ['ignore', log ?? 'pipe', log ?? 'pipe'],
    });
  } finally {
    if (log !== undefined) closeSync(log);
  }
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
    output: () => (spec.logFile === undefined ? output : readFileSync(spec.logFile, 'utf8')),
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

/** Starts src/server as a real process, as the tests run it; waits until /health answers unless `waitReady` is false. */
export function startServer(
  env: Record<string, string>,
  options: { waitReady?: boolean; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  return launchServer(
    {
      env: {
        PATH: process.env.PATH ?? '',
        LOG_LEVEL: 'warn',
        // A busy test machine lags the event loop: no shedding unless a suite asks for it (test/faults/overload).
        FUNIL_MAX_EVENT_LOOP_DELAY_MS: '0',
        ...env,
      },
    },
    options,
  );
}

async function waitForHealth(server: ServerProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) {
      throw new Error(`server exited with ${server.child.exitCode}:\n${server.output()}`);
    }
    try {
      const response = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(1_000) });
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
