/** Starts a server as a child process, waits for its /health, and stops it by its PID. */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { get } from 'node:http';
import { freePort } from '../../test/helpers/free-port.js';
import { npmStartFlags } from '../../test/helpers/npm-start.js';

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

export async function startServer(spec: ServerSpec, port: number, readyTimeoutMs = 60_000): Promise<RunningServer> {
  const log = openSync(spec.logFile, 'w');
  let child: ChildProcess;
  try {
    child = spawn(spec.node ?? process.execPath, spec.args, {
      cwd: spec.cwd,
      env: { ...spec.env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', log, log],
    });
  } finally {
    closeSync(log);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${spec.label}: could not start`);
  let exited: string | undefined;
  const exit = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = signal ? `signal ${signal}` : `exit ${code}`;
      resolve(exited);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async (graceMs = 15_000) => {
    if (exited) return exited;
    process.kill(pid, 'SIGTERM');
    const timer = setTimeout(() => {
      if (!exited) process.kill(pid, 'SIGKILL');
    }, graceMs);
    const how = await exit;
    clearTimeout(timer);
    return how;
  };
  const deadline = Date.now() + readyTimeoutMs;
  while (!(await healthy(url))) {
    if (exited || Date.now() > deadline) {
      await stop(2_000);
      throw new Error(`${spec.label} did not become ready (${exited ?? 'timed out'}):\n${tail(spec.logFile)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { label: spec.label, pid, url, logFile: spec.logFile, stop };
}

function healthy(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = get(`${url}/health`, { timeout: 1_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('error', () => resolve(false));
    request.on('timeout', () => request.destroy());
  });
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
