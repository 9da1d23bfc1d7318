import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
  /** `performance.now()` when it arrived whole. */
  at: number;
}

/**
 * A real webhook receiver on 127.0.0.1: records each POST and answers with the next status
 * scripted for its path (200 past the end), after `delayMs` (or the path's own delay).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  readonly #scripts = new Map<string, number[]>();
  readonly #delays = new Map<string, number>();
  delayMs = 0;
  #server: Server | undefined;

  async start(): Promise<void> {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.received.push({
          path: request.url,
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: performance.now(),
        });
        const path = request.url ?? '';
        const status = this.#scripts.get(path)?.shift() ?? 200;
        const delay = this.#delays.get(path) ?? this.delayMs;
        setTimeout(() => response.writeHead(status, { 'content-type': 'text/plain' }).end('thanks'), delay);
      });
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
  }

  /** The statuses the next requests to `path` get, in turn. */
  respond(path: string, ...statuses: number[]): void {
    this.#scripts.set(path, [...(this.#scripts.get(path) ?? []), ...statuses]);
  }

  /** How long requests to `path` wait for their answer. */
  delay(path: string, ms: number): void {
    this.#delays.set(path, ms);
  }

  url(path: string): string {
    const address = this.#server?.address() as AddressInfo | undefined;
    return `http://127.0.0.1:${address?.port}${path}`;
  }

  /** What arrived at `path`, once `count` have (failing after `timeoutMs`). */
  async at(path: string, count = 1, timeoutMs = 20_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const arrived = this.received.filter((received) => received.path === path);
      if (arrived.length >= count) return arrived;
      if (Date.now() > deadline) throw new Error(`${path}: ${arrived.length} of ${count} deliveries arrived`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The webhook-id of each delivery that arrived at `path`, with how many times it came. */
  idsAt(path: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const received of this.received.filter((r) => r.path === path)) {
      const id = String(received.headers['webhook-id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  close(): Promise<void> {
    this.#server?.closeAllConnections();
    return new Promise((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
