import { CliError } from './output.js';

const ADMIN_PREFIX = '/api/admin/v1';
const TIMEOUT_MS = 30_000;

export interface AdminClientOptions {
  url: string;
  adminToken: string | undefined;
}

interface ErrorBody {
  error?: unknown;
  code?: unknown;
  requestId?: unknown;
  details?: { field?: unknown; message?: unknown }[];
}

/** A thin client of the admin API (SPEC §9): one HTTP call per method, errors as CliError. */
export class AdminClient {
  readonly #baseUrl: string;
  readonly #adminToken: string;

  constructor({ url, adminToken }: AdminClientOptions) {
    this.#baseUrl = parseBaseUrl(url);
    const token = adminToken?.trim();
    if (!token) throw new CliError('no admin token: set FUNIL_ADMIN_TOKEN or pass --admin-token');
    this.#adminToken = token;
  }

  get<T>(path: string): Promise<T> {
    return this.#request<T>('GET', path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.#request<T>('POST', path, body);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.#request<T>('PUT', path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.#request<T>('DELETE', path);
  }

  async #request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#adminToken}`,
      accept: 'application/json',
      // Error texts in English for the terminal; `code` is the same in every language (SPEC §2).
      'accept-language': 'en',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.#baseUrl}${ADMIN_PREFIX}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      throw this.#unreachable(error);
    }
    const parsed = parseJson(text);
    if (parsed === undefined) {
      throw new CliError(
        `unexpected answer from ${this.#baseUrl}: HTTP ${response.status} ${response.statusText}, not JSON (is it a Funil server?)`,
      );
    }
    if (!response.ok) throw new CliError(apiErrorMessage(response, parsed as ErrorBody));
    return parsed as T;
  }

  #unreachable(error: unknown): CliError {
    if (error instanceof Error && error.name === 'TimeoutError') {
      return new CliError(`${this.#baseUrl} did not answer within ${TIMEOUT_MS / 1000} s`);
    }
    return new CliError(`cannot reach ${this.#baseUrl}: ${networkReason(error)}`);
  }
}

function parseBaseUrl(url: string): string {
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
  if (parsed.protocol === 'http:' && !isLoopback(parsed.hostname)) {
    process.stderr.write(
      `funil: warning: sending the admin token in the clear to ${parsed.host} (plain http): use https:// beyond this machine\n`,
    );
  }
  // Keeps a path prefix (Funil behind a reverse proxy), without its trailing slash.
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

/** A host on this machine: the admin token never leaves it over plain http. */
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

/** `Tenant not found. (not_found)`, with the fields at fault the message does not already name. */
function apiErrorMessage(response: Response, body: ErrorBody): string {
  const error = typeof body.error === 'string' ? body.error : `HTTP ${response.status} ${response.statusText}`;
  const details = (Array.isArray(body.details) ? body.details : [])
    .map((detail) => (typeof detail.message === 'string' ? detail.message : undefined))
    .filter((message): message is string => message !== undefined && message !== error);
  const about = [typeof body.code === 'string' ? body.code : `HTTP ${response.status}`];
  if (typeof body.requestId === 'string') about.push(`requestId ${body.requestId}`);
  return [error, ...details].join(' ').concat(` (${about.join(', ')})`);
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
