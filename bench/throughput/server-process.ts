/** Starts a server as a child process for a bench, waits for its /health, and stops it by its PID. */
import { readFileSync, statSync } from 'node:fs';
import { freePort } from '../../test/helpers/free-port.js';
import { npmStartFlags } from '../../test/helpers/npm-start.js';
import { launchServer, type ServerProcess } from '../../test/helpers/server-process.js';

export { freePort, npmStartFlags };

export interface ServerSpec {
  label: string;
  /** Arguments to `node`. */
  args: string[];
  /** The Node.js binary; this process's unless given. */
  node?: string;
  env: Record<string, string>;
  /** Where its stdout and stderr go. */
  logFile: string;
  cwd: string;
}

export interface RunningServer {
  label: string;
  pid: number;
  url: string;
  logFile: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs?: number): Promise<string>;
}

/** The tests' launcher (test/helpers/server-process.ts), with the log in a file and the bench's names. */
export async function startServer(spec: ServerSpec, port: number, readyTimeoutMs = 60_000): Promise<RunningServer> {
  let server: ServerProcess;
  try {
    server = await launchServer(
      { env: spec.env, args: spec.args, node: spec.node, cwd: spec.cwd, logFile: spec.logFile, port },
      { timeoutMs: readyTimeoutMs },
    );
  } catch (error) {
    throw new Error(
      `${spec.label} did not become ready: ${(error as Error).message.slice(0, 200)}\n${tail(spec.logFile)}`,
    );
  }
  const { child } = server;
  const how = () => (child.signalCode ? `signal ${child.signalCode}` : `exit ${child.exitCode}`);
  return {
    label: spec.label,
    pid: server.pid,
    url: server.url,
    logFile: spec.logFile,
    stop: async (graceMs = 15_000) => {
      await server.stop(graceMs);
      return how();
    },
  };
}

export function tail(file: string, bytes = 2_000): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.slice(-bytes);
  } catch {
    return '(no log)';
  }
}

export function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
