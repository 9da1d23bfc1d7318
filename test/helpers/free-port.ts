import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Where the ports are drawn from: below the kernel's ephemeral range, up to this many of them. */
const SPAN = 10_000;

/** The first port of the range the kernel hands out for `listen(0)` and outgoing connections. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > SPAN + 1_024 ? low : 32_768;
  } catch {
    return 32_768; // Linux's default; elsewhere a guess, and the check below still holds.
  }
}

/** Whether nothing listens on `port` of 127.0.0.1 right now. */
async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) await new Promise((closed) => server.close(closed));
  return listening;
}

/**
 * A port nobody listens on right now, for a server process started on it. Drawn at random below
 * the ephemeral range: a port that `listen(0)` handed out and gave back would be handed out again
 * to the next `listen(0)` (a webhook receiver of a test running beside), which could take it in
 * the second it takes the process to start, and the process's health check would be answered by
 * the receiver. Two callers drawing the same port is left to `launchServer`, which retries.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = high - 1 - Math.floor(Math.random() * SPAN);
    if (await isFree(port)) return port;
  }
  throw new Error('no free port');
}
