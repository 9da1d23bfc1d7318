import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  body: any;
}

/**
 * One TCP connection spoken to byte by byte, for what an HTTP client library will not do on
 * purpose: send half a request, wait, then the rest; keep a connection open between requests.
 */
export class RawConnection {
  #buffer = Buffer.alloc(0);
  #ended = false;
  #waiters: Array<() => void> = [];

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake();
    });
    socket.on('close', () => {
      this.#ended = true;
      this.#wake();
    });
    socket.on('error', () => {
      this.#ended = true;
      this.#wake();
    });
  }

  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  /** Whether the server has closed the connection. */
  get ended(): boolean {
    return this.#ended;
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** Reads one whole answer (its body sized by Content-Length); rejects if the connection ends first. */
  async readAnswer(timeoutMs = 10_000): Promise<RawAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = this.#take();
      if (answer) return answer;
      if (this.#ended) throw new Error(`connection closed before a whole answer: ${this.#buffer.toString()}`);
      if (Date.now() > deadline) throw new Error('no answer in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves once the server has closed the connection, or rejects after `timeoutMs`. */
  async closedByServer(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#ended) {
      if (Date.now() > deadline) throw new Error('the server kept the connection open');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  #take(): RawAnswer | undefined {
    const end = this.#buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine = '', ...lines] = this.#buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.#buffer.length < end + 4 + length) return undefined;
    const text = this.#buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    this.#buffer = this.#buffer.subarray(end + 4 + length);
    const status = Number(statusLine.split(' ')[1]);
    const json = (headers['content-type'] ?? '').startsWith('application/json');
    return { status, headers, body: json ? JSON.parse(text) : text };
  }
}
