import { type Agent, type IncomingHttpHeaders, request } from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  readonly body: any;
  /** From the request's start to the last byte of the answer. */
  readonly ms: number;
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** A keep-alive agent to reuse connections with; a fresh connection per request when absent. */
  agent?: Agent;
  /** The request is abandoned, and `send` rejects with `timed out`, after this long. */
  timeoutMs?: number;
}

/** An answer that began but did not arrive whole: never acceptable, unlike a refused connection. */
export class TruncatedAnswer extends Error {}

/**
 * One HTTP request with node:http, strict about what comes back: it rejects when the answer is
 * cut short (the connection closed before the last byte) or its JSON body does not parse, so a
 * truncated answer can never pass for a complete one.
 */
export function send(url: string, options: SendOptions = {}): Promise<HttpAnswer> {
  const started = performance.now();
  const payload = options.json === undefined ? undefined : JSON.stringify(options.json);
  const headers: Record<string, string> = { ...options.headers };
  if (payload !== undefined) headers['content-type'] ??= 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers, agent: options.agent ?? false });
    const timer = setTimeout(() => req.destroy(new Error('timed out')), options.timeoutMs ?? 10_000);
    req.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', (error) => {
        clearTimeout(timer);
        reject(new TruncatedAnswer(`${res.statusCode} cut short: ${error.message}`));
      });
      res.once('end', () => {
        clearTimeout(timer);
        if (!res.complete) return reject(new TruncatedAnswer(`${res.statusCode} cut short`));
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        if (String(res.headers['content-type'] ?? '').startsWith('application/json')) {
          try {
            body = JSON.parse(text);
          } catch {
            return reject(new TruncatedAnswer(`${res.statusCode} with a malformed JSON body: ${text.slice(0, 200)}`));
          }
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, ms: performance.now() - started });
      });
    });
    req.end(payload);
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
