import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import type { Text } from '../shared/messages.js';
import { specialRangeAmong } from './special-addresses.js';
import { signatureHeader } from './webhook-signature.js';
import { type TargetPolicy, targetProblem } from './webhook-target.js';

export interface WebhookRequest {
  readonly url: string;
  /** The `webhook-id` header: the event id, the same on every retry. */
  readonly id: string;
  /** The exact JSON text to send. */
  readonly body: string;
  /** `whsec_` secrets; each one signs. */
  readonly secrets: readonly string[];
  /** For the whole attempt: address check, connect, answer and reading its first bytes. */
  readonly timeoutMs: number;
  readonly policy: TargetPolicy;
}

export interface WebhookOutcome {
  /** A 2xx answer within the timeout. */
  readonly ok: boolean;
  readonly status: number | null;
  /** Why the attempt failed when no answer says it (timeout, refused address, connection error). */
  readonly error: string | null;
  readonly durationMs: number;
  /** The first 1 KiB of the answer body (no more is read). */
  readonly response: string | null;
}

type Answer = Pick<WebhookOutcome, 'status' | 'error' | 'response'>;

const RESPONSE_LIMIT = 1024;
const ECHO_LIMIT = 100;

// Without keep-alive every attempt opens its own connection, so the filtering agents check the
// address actually connected to (a host that resolved to a public address may rebind to a private one).
const filtering = { keepAlive: false, allowPrivateIPAddress: false, allowMetaIPAddress: false };
const filteringAgents = {
  'http:': new RequestFilteringHttpAgent(filtering),
  'https:': new RequestFilteringHttpsAgent(filtering),
};
const openAgents = {
  'http:': new http.Agent({ keepAlive: false }),
  'https:': new https.Agent({ keepAlive: false }),
};

/** One delivery attempt (SPEC §15). Never throws: every failure is an outcome. Redirects are not followed. */
export async function sendWebhook(request: WebhookRequest, now: () => number = Date.now): Promise<WebhookOutcome> {
  const startedAt = now();
  const answer = await attempt(request, Math.floor(startedAt / 1000));
  const ok = answer.error === null && answer.status !== null && answer.status >= 200 && answer.status < 300;
  return { ok, ...answer, durationMs: now() - startedAt };
}

function attempt(request: WebhookRequest, timestampSeconds: number): Promise<Answer> {
  return new Promise((resolve) => {
    let outgoing: http.ClientRequest | undefined;
    let status: number | null = null;
    const received: Buffer[] = [];
    let settled = false;
    const settle = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      outgoing?.destroy();
      const response = status === null ? null : Buffer.concat(received).subarray(0, RESPONSE_LIMIT).toString('utf8');
      resolve({ status, error, response });
    };
    const deadline = setTimeout(() => settle(`timed out after ${request.timeoutMs} ms`), request.timeoutMs);

    const post = (problem: Text | null) => {
      if (settled) return;
      if (problem !== null) return settle(problem.en);
      outgoing = open(request, timestampSeconds, (answer) => {
        status = answer.statusCode ?? null;
        let length = 0;
        answer.on('data', (chunk: Buffer) => {
          received.push(chunk);
          length += chunk.length;
          if (length >= RESPONSE_LIMIT) settle(null);
        });
        answer.on('end', () => settle(null));
        answer.on('error', (error) => settle(describe(error)));
      });
      outgoing.on('error', (error) => settle(describe(error)));
      outgoing.end(request.body);
    };
    targetProblem(request.url, request.policy)
      .then(post)
      .catch((error: unknown) => settle(describe(error)));
  });
}

function open(
  request: WebhookRequest,
  timestampSeconds: number,
  onAnswer: (answer: http.IncomingMessage) => void,
): http.ClientRequest {
  const url = new URL(request.url);
  const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
  const agent = (request.policy.allowPrivate ? openAgents : filteringAgents)[protocol];
  const client = protocol === 'https:' ? https : http;
  const headers = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(request.body),
    'user-agent': 'Funil-Webhooks/1',
    'webhook-id': request.id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signatureHeader(request.secrets, request.id, timestampSeconds, request.body),
  };
  const lookup = request.policy.allowPrivate ? undefined : publicLookup;
  return client.request(url, { method: 'POST', agent, headers, lookup }, onAnswer);
}

/** Refused at connect: the address the name resolved to is special (its rule named, never the address). */
class SpecialAddressError extends Error {
  constructor(readonly rule: string) {
    super(`the connection was refused: the host resolves to a non-public address (${rule})`);
  }
}

/**
 * The lookup of the connection itself, checked against the same list as a subscription's URL
 * (special-addresses.ts), so that a name that resolved to a public address when checked and to a
 * private one a moment later (DNS rebinding) is still refused. The filtering agent checks what
 * this answers again, by its own rules.
 */
export function checkedLookup(resolve: typeof dns.lookup = dns.lookup): NonNullable<http.RequestOptions['lookup']> {
  return (hostname, options, callback) => publicAddressesOf(resolve, hostname, options, callback);
}

const publicLookup = checkedLookup();

function publicAddressesOf(
  resolve: typeof dns.lookup,
  hostname: string,
  options: dns.LookupOptions,
  callback: Parameters<NonNullable<http.RequestOptions['lookup']>>[2],
): void {
  resolve(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return (callback as (error: Error) => void)(error);
    const rule = specialRangeAmong(addresses.map((entry) => entry.address));
    if (rule !== undefined) return (callback as (error: Error) => void)(new SpecialAddressError(rule));
    if (options.all) return (callback as (error: null, addresses: dns.LookupAddress[]) => void)(null, addresses);
    const [first] = addresses;
    if (!first) return (callback as (error: Error) => void)(new Error('the host does not resolve'));
    (callback as (error: null, address: string, family: number) => void)(null, first.address, first.family);
  });
}

const CONNECTION_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'the host does not resolve',
  EAI_AGAIN: 'the host does not resolve',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
};

// request-filtering-agent reports a refused address only by this message (no error code).
const FILTERED_ADDRESS = /^DNS lookup \S+?\(family:.* is not allowed/;

/** A short reason without the URL (its path or query may hold a receiver's token), nor a resolved address. */
function describe(error: unknown): string {
  if (error instanceof SpecialAddressError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  if (FILTERED_ADDRESS.test(message)) return 'the connection was refused: the host resolves to a non-public address';
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code) return CONNECTION_ERRORS[code] ?? `request failed (${code})`;
  return message.length > ECHO_LIMIT ? `${message.slice(0, ECHO_LIMIT)}…` : message;
}
