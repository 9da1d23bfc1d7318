import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { send, sleep } from './http-client.js';
import { moduleArgs } from './module-args.js';

export interface Probe {
  status: number | string;
  ms: number;
}

/**
 * Probes `GET /health` every 100 ms on one kept-alive connection, from a process of its own: a
 * test process busy generating load would delay the readings with its own work.
 */
export async function startHealthProbe(url: string): Promise<{ stop(): Promise<Probe[]> }> {
  const child = spawn(process.execPath, [...moduleArgs(new URL(import.meta.url)), url], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const probes: Probe[] = [];
  const lines = createInterface({ input: child.stdout });
  let ready: () => void = () => {};
  const connected = new Promise<void>((resolve) => (ready = resolve));
  lines.on('line', (line) => {
    if (line === 'ready') return ready();
    probes.push(JSON.parse(line) as Probe);
  });
  const exited = once(child, 'exit');
  await Promise.race([connected, exited.then(() => Promise.reject(new Error('the health probe exited')))]);
  return {
    /** Ends the probe (any number of times) and resolves with its readings. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      return probes;
    },
  };
}

async function probeUntilStdinCloses(url: string): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let running = true;
  process.stdin.on('end', () => {
    running = false;
  });
  process.stdin.resume();
  await send(`${url}/health`, { agent });
  process.stdout.write('ready\n');
  while (running) {
    const started = performance.now();
    let probe: Probe;
    try {
      const answer = await send(`${url}/health`, { agent, timeoutMs: 10_000 });
      probe = { status: answer.status, ms: answer.ms };
    } catch (error) {
      probe = { status: String(error), ms: performance.now() - started };
    }
    process.stdout.write(`${JSON.stringify(probe)}\n`);
    await sleep(100);
  }
  agent.destroy();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await probeUntilStdinCloses(process.argv[2] as string);
