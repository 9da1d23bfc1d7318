import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { text as readText } from 'node:stream/consumers';
import { CliError } from './output.js';

const TIMEOUT_MS = 30_000;

/** Which API a client talks to, and the token it shows. */
export interface ServerClientOptions {
  url: string;
  token: string | undefined;
  /** `/api/admin/v1` or `/api/external/v1`. */
  prefix: string;
  /** How errors and warnings name the token: `admin token`, `tenant token`. */
  tokenName: string;
  /** Where the token comes from, for the error when it is missing. */
  tokenHint: string;
}

/** A file sent as the whole body of a request, as it is read. */
export interface Upload {
  stream: Readable;
  contentType: string;
}

export interface CallOptions {
  body?: unknown;
  upload?: Upload;
  /** Aborts the call (Ctrl-C); an upload has no time limit of its own beyond this. */
  signal?: AbortSignal;
}

/** A 2xx answer: its JSON and its headers (Location, X-Next-Cursor). */
export interface Answer<T> {
  body: T;
  headers: Headers;
}

interface ErrorBody {
  error?: unknown;
  code?: unknown;
  requestId?: unknown;
  details?: { field?: unknown; message?: unknown }[];
}

/** A non-2xx answer of the API, as one line (CliError), keeping its status and code for callers that handle one. */
export class ApiError extends CliError {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** A thin client of one of Funil's APIs: one HTTP call per method, errors as CliError. */
export class ServerClient {
  readonly baseUrl: string;
  readonly #prefix: string;
  readonly #token: string;

  constructor({ url, token, prefix, tokenName, tokenHint }: ServerClientOptions) {
    const trimmed = token?.trim();
    this.baseUrl = parseBaseUrl(url, tokenName, trimmed !== undefined && trimmed !== '');
    if (!trimmed) throw new CliError(`no ${tokenName}: ${tokenHint}`);
    this.#prefix = prefix;
    this.#token = trimmed;
  }

  get<T>(path: string): Promise<T> {
    return this.call<T>('GET', path).then((answer) => answer.body);
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('POST', path, { body }).then((answer) => answer.body);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>('PUT', path, { body }).then((answer) => answer.body);
  }

  delete<T>(path: string): Promise<T> {
    return this.call<T>('DELETE', path).then((answer) => answer.body);
  }

  async call<T>(method: string, path: string, { body, upload, signal }: CallOptions = {}): Promise<Answer<T>> {
    const headers = this.#headers();
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (upload) headers['content-type'] = upload.contentType;
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.baseUrl}${this.#prefix}${path}`, {
        method,
        headers,
        // A stream is sent as it is read, never whole in memory (undici needs `duplex` for that).
        body: upload
          ? (upload.stream as unknown as ReadableStream)
          : body === undefined
            ? undefined
            : JSON.stringify(body),
        ...(upload && { duplex: 'half' }),
        signal: upload ? signal : anySignal(signal, AbortSignal.timeout(TIMEOUT_MS)),
      } as RequestInit);
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw error;
      throw this.#unreachable(error);
    }
    return { body: this.#parsed<T>(response.status, response.statusText, text), headers: response.headers };
  }

  /**
   * A file the API streams (`GET /exports/:id/file`), asked for gzipped: the answer's body as it
   * arrives, still compressed when `Content-Encoding: gzip` says so (fetch would unzip it out of
   * sight; node:http leaves that, and the pace, to the caller). Not a 2xx: thrown as ApiError.
   */
  async download(path: string, signal: AbortSignal): Promise<IncomingMessage> {
    const url = new URL(`${this.baseUrl}${this.#prefix}${path}`);
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let response: IncomingMessage;
    try {
      response = await new Promise<IncomingMessage>((resolve, reject) => {
        const headers = { ...this.#headers(), accept: '*/*', 'accept-encoding': 'gzip' };
        // `timeout`: the socket's idle time, so a download that stalls fails as a request would.
        const sent = request(url, { headers, signal, timeout: TIMEOUT_MS }, resolve);
        sent.on('timeout', () => sent.destroy(Object.assign(new Error('idle'), { name: 'TimeoutError' })));
        sent.on('error', reject);
        sent.end();
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw this.#unreachable(error);
    }
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return response;
    const text = await readText(response).catch(() => '');
    throw this.#failure(status, response.statusMessage ?? '', parseJson(text));
  }

  #headers(): Record<string, string> {
    return {
      authorization: `Bearer ${this.#token}`,
      accept: 'application/json',
      // Error texts in English for the terminal; `code` is the same in every language (SPEC §2).
      'accept-language': 'en',
    };
  }

  /** A 2xx answer's JSON; anything else thrown (#failure). */
  #parsed<T>(status: number, statusText: string, text: string): T {
    const parsed = parseJson(text);
    if (parsed === undefined || status < 200 || status >= 300) throw this.#failure(status, statusText, parsed);
    return parsed as T;
  }

  /** A non-2xx answer as ApiError (with its status and code); one that is not JSON as a CliError. */
  #failure(status: number, statusText: string, parsed: unknown): CliError {
    if (parsed === undefined) {
      return new CliError(
        `unexpected answer from ${this.baseUrl}: HTTP ${status} ${statusText}, not JSON (is it a Funil server?)`,
      );
    }
    const error = parsed as ErrorBody;
    const code = typeof error.code === 'string' ? error.code : undefined;
    return new ApiError(apiErrorMessage(status, statusText, error), status, code);
  }

  #unreachable(error: unknown): CliError {
    if (error instanceof Error && error.name === 'TimeoutError') {
      return new CliError(`${this.baseUrl} did not answer within ${TIMEOUT_MS / 1000} s`);
    }
    return new CliError(`cannot reach ${this.baseUrl}: ${networkReason(error)}`);
  }
}

function anySignal(first: AbortSignal | undefined, second: AbortSignal): AbortSignal {
  return first ? AbortSignal.any([first, second]) : second;
}

function parseBaseUrl(url: string, tokenName: string, hasToken: boolean): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`invalid server URL "${url}": expected e.g. http://127.0.0.1:3000`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`invalid server URL "${url}": use http:// or https://`);
  }
  if (parsed.search || parsed.hash) throw new CliError(`invalid server URL "${url}": no query or fragment`);
  if (hasToken && parsed.protocol === 'http:' && !isLoopback(parsed.hostname)) {
    process.stderr.write(
      `funil: warning: sending the ${tokenName} in the clear to ${parsed.host} (plain http): use https:// beyond this machine\n`,
    );
  }
  // Keeps a path prefix (Funil behind a reverse proxy), without its trailing slash.
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

/** A host on this machine: a token sent to it over plain http never leaves it. */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * `Tenant not found. (not_found)`, with the other issues' messages, and the fields at fault that no
 * message names in full (an export's `query.status`, whose message speaks of `status`).
 */
function apiErrorMessage(status: number, statusText: string, body: ErrorBody): string {
  const error = typeof body.error === 'string' ? body.error : `HTTP ${status} ${statusText}`;
  const issues = Array.isArray(body.details) ? body.details : [];
  const details = issues
    .map((detail) => (typeof detail.message === 'string' ? detail.message : undefined))
    .filter((message): message is string => message !== undefined && message !== error);
  const text = [error, ...details].join(' ');
  const unnamed = issues
    .map((detail) => detail.field)
    .filter((field): field is string => typeof field === 'string' && field !== '' && !text.includes(field));
  const about = [typeof body.code === 'string' ? body.code : `HTTP ${status}`];
  if (unnamed.length > 0) about.push(`field ${[...new Set(unnamed)].join(', ')}`);
  if (typeof body.requestId === 'string') about.push(`requestId ${body.requestId}`);
  return `${text} (${about.join(', ')})`;
}

/** The system error code (ECONNREFUSED, ENOTFOUND, ...) that undici wraps in `fetch failed`. */
function networkReason(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if (current.cause === undefined) return current.message;
    current = current.cause;
  }
  // AggregateError (several addresses tried) or a non-Error cause.
  const errors = (current as { errors?: unknown[] } | undefined)?.errors;
  const first = errors?.find((e) => typeof (e as { code?: unknown }).code === 'string') as { code: string } | undefined;
  return first?.code ?? String(current);
}
