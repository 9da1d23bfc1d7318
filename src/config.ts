import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { DEFAULT_EMBEDDED_SHARED_BUFFERS_MB, MAX_EMBEDDED_SHARED_BUFFERS_MB } from './db/pglite-settings.js';
import { DEFAULT_DB_CONNECT_TIMEOUT_MS, DEFAULT_DB_STATEMENT_TIMEOUT_MS } from './db/timeouts.js';
import type { WebhookSettings } from './webhooks/webhook-settings.js';

export const DEFAULT_LEAD_STATUSES = [
  'new',
  'contacted',
  'qualified',
  'proposal',
  'negotiation',
  'won',
  'lost',
] as const;

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly nodeEnv: string;
  readonly logLevel: string;
  /** PostgreSQL connection string; when absent Funil runs on embedded PGlite in `dataDir`. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly databasePoolSize: number;
  /** How long a query may wait for a database connection (a free pool slot, or a new connection). */
  readonly databaseConnectTimeoutMs: number;
  /** PostgreSQL's `statement_timeout` for every statement Funil sends. */
  readonly databaseStatementTimeoutMs: number;
  /** A request still unanswered after this long gets 503 `service_unavailable` (SPEC §2: within 5 s). */
  readonly requestTimeoutMs: number;
  /** Shed requests with 503 while the event loop lags by more than this on average; 0 turns it off. */
  readonly maxEventLoopDelayMs: number;
  /** Shed requests with 503 while the V8 heap in use exceeds this; undefined: 90 % of the heap limit; 0: off. */
  readonly maxHeapUsedMb: number | undefined;
  readonly adminToken: string | undefined;
  readonly bootstrap: boolean;
  readonly leadStatuses: readonly string[];
  /**
   * Whom `X-Forwarded-For` is believed from: false (nobody), a number of proxy hops, or the proxies'
   * addresses and CIDR ranges. Never everyone: a client could then choose its own address.
   */
  readonly trustProxy: false | number | readonly string[];
  /**
   * Requests of one tenant served at once on this instance (SPEC §10: its share); the others wait in
   * its line. Undefined: half the pool, at least 2.
   */
  readonly tenantConcurrency: number | undefined;
  /** Requests of one tenant that may wait in its line at once on this instance; past it, 429 (SPEC §10). */
  readonly tenantQueue: number;
  /**
   * Requests served at once on this instance, all tenants together; the others wait in their
   * tenants' lines, which take turns. Undefined: the pool's size on PostgreSQL, 4 on the embedded database.
   */
  readonly requestConcurrency: number | undefined;
  /** The most rows a filtered list page reads; unset: 50,000 on the embedded database, no bound on PostgreSQL. */
  readonly listScanRows: number | undefined;
  /** Hot statements run as named prepared statements on PostgreSQL (off behind a pooler that cannot keep them). */
  readonly databasePreparedStatements: boolean;
  /** The embedded database's buffer cache, in MB (PGlite's shared_buffers); not used on PostgreSQL. */
  readonly embeddedSharedBuffersMb: number;
  /** SPEC §14: days an event is kept in the change feed. */
  readonly eventRetentionDays: number;
  /** SPEC §15: webhook delivery settings. */
  readonly webhooks: WebhookSettings;
  /** Requests per minute per token on the external API (SPEC §10). */
  readonly rateLimit: number;
  /** Requests per minute per client address on the admin API. */
  readonly adminRateLimit: number;
  /** Where rate-limit counters live when several instances share them; in memory when absent. */
  readonly redisUrl: string | undefined;
  /** When set, `GET /metrics` answers only to `Authorization: Bearer <this>`. */
  readonly metricsToken: string | undefined;
  /** Browser origins allowed to call the external API (CORS); `['*']` for any; empty: no CORS at all. */
  readonly corsOrigins: readonly string[];
}

/** SPEC §15's retry schedule, in seconds. */
export const DEFAULT_WEBHOOK_RETRY_DELAYS_SEC = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

/**
 * SPEC §2 wants every answer, a 503 during a database outage included, within 5 s. The request
 * deadline (4 s, FUNIL_REQUEST_TIMEOUT_MS) guarantees it, with a margin for the answer's way out;
 * below it, a request waits at most 1 s in all for connections (SPEC §10: bounded waiting) and PostgreSQL
 * cancels a statement after 3 s, so that work whose answer is already lost does not go on.
 */
const DEFAULT_REQUEST_TIMEOUT_MS = 4_000;

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/** Reads the environment once, at start; everything else receives the frozen result. */
export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = env.NODE_ENV ?? 'development';
  const adminToken = nonEmpty(env.FUNIL_ADMIN_TOKEN);
  if (adminToken !== undefined && adminToken.length < 32) {
    throw new ConfigError('FUNIL_ADMIN_TOKEN must be at least 32 characters long');
  }
  return Object.freeze({
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    nodeEnv,
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    databaseUrl: nonEmpty(env.DATABASE_URL),
    dataDir: resolve(nonEmpty(env.FUNIL_DATA_DIR) ?? './data'),
    databasePoolSize: integer(env, 'FUNIL_DB_POOL_SIZE', 10, 1, 200),
    databaseConnectTimeoutMs: integer(env, 'FUNIL_DB_CONNECT_TIMEOUT_MS', DEFAULT_DB_CONNECT_TIMEOUT_MS, 100, 60_000),
    databaseStatementTimeoutMs: integer(
      env,
      'FUNIL_DB_STATEMENT_TIMEOUT_MS',
      DEFAULT_DB_STATEMENT_TIMEOUT_MS,
      100,
      3_600_000,
    ),
    requestTimeoutMs: integer(env, 'FUNIL_REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 100, 3_600_000),
    maxEventLoopDelayMs: integer(env, 'FUNIL_MAX_EVENT_LOOP_DELAY_MS', 500, 0, 60_000),
    maxHeapUsedMb: optionalInteger(env, 'FUNIL_MAX_HEAP_USED_MB', 0, 1_000_000),
    adminToken,
    bootstrap: boolean(env, 'FUNIL_BOOTSTRAP', nodeEnv !== 'production'),
    leadStatuses: Object.freeze(leadStatuses(env.FUNIL_LEAD_STATUSES)),
    trustProxy: trustProxy(env.FUNIL_TRUST_PROXY),
    rateLimit: integer(env, 'FUNIL_RATE_LIMIT', 1200, 1, 10_000_000),
    tenantConcurrency: optionalInteger(env, 'FUNIL_TENANT_CONCURRENCY', 1, 100_000),
    tenantQueue: integer(env, 'FUNIL_TENANT_QUEUE', 256, 0, 100_000),
    requestConcurrency: optionalInteger(env, 'FUNIL_REQUEST_CONCURRENCY', 1, 100_000),
    listScanRows: optionalInteger(env, 'FUNIL_LIST_SCAN_ROWS', 10, 100_000_000),
    databasePreparedStatements: boolean(env, 'FUNIL_DB_PREPARED_STATEMENTS', true),
    embeddedSharedBuffersMb: integer(
      env,
      'FUNIL_EMBEDDED_SHARED_BUFFERS_MB',
      DEFAULT_EMBEDDED_SHARED_BUFFERS_MB,
      1,
      MAX_EMBEDDED_SHARED_BUFFERS_MB,
    ),
    eventRetentionDays: integer(env, 'FUNIL_EVENT_RETENTION_DAYS', 30, 1, 36_500),
    webhooks: Object.freeze({
      deliver: boolean(env, 'FUNIL_WEBHOOKS_DELIVER', true),
      allowHttp: boolean(env, 'FUNIL_WEBHOOKS_ALLOW_HTTP', false),
      allowPrivate: boolean(env, 'FUNIL_WEBHOOKS_ALLOW_PRIVATE', false),
      retryDelaysSec: Object.freeze(retryDelays(env.FUNIL_WEBHOOKS_RETRY_DELAYS)),
      secretKey: secretKey(env.FUNIL_WEBHOOKS_SECRET_KEY),
    }),
    adminRateLimit: integer(env, 'FUNIL_ADMIN_RATE_LIMIT', 120, 1, 10_000_000),
    redisUrl: nonEmpty(env.REDIS_URL),
    metricsToken: metricsToken(env.FUNIL_METRICS_TOKEN, adminToken),
    corsOrigins: Object.freeze(corsOrigins(env.FUNIL_CORS_ORIGINS)),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function optionalInteger(env: Env, name: string, min: number, max: number): number | undefined {
  return nonEmpty(env[name]) === undefined ? undefined : integer(env, name, min, min, max);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** A hop count (`1`: one proxy in front) or a comma list of addresses and CIDR ranges (`10.0.0.0/8,::1`). */
function trustProxy(raw: string | undefined): Config['trustProxy'] {
  const value = nonEmpty(raw)?.toLowerCase();
  if (value === undefined || ['false', '0', 'no', 'off'].includes(value)) return false;
  if (/^\d+$/.test(value) && Number(value) <= 100) return Number(value);
  const proxies = value.split(',').map((s) => s.trim());
  if (proxies.every(isAddressOrRange)) return Object.freeze(proxies);
  throw new ConfigError(
    `FUNIL_TRUST_PROXY must be a number of proxy hops (1) or a comma list of the proxies' addresses or CIDR ranges (10.0.0.0/8,127.0.0.1), got "${raw?.trim()}"` +
      (['true', 'yes', 'on'].includes(value)
        ? ': trusting every sender would let any client pick its own address'
        : ''),
  );
}

function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** Printable ASCII without spaces, so that it fits `Authorization: Bearer <token>`. */
const TOKEN_PATTERN = /^[\x21-\x7e]{32,}$/;

function metricsToken(raw: string | undefined, adminToken: string | undefined): string | undefined {
  const token = nonEmpty(raw);
  if (token === undefined) return undefined;
  if (!TOKEN_PATTERN.test(token)) {
    throw new ConfigError('FUNIL_METRICS_TOKEN must be at least 32 printable characters, without spaces');
  }
  // The scraper's configuration is not a place for the key to the admin API.
  if (token === adminToken) throw new ConfigError('FUNIL_METRICS_TOKEN must differ from FUNIL_ADMIN_TOKEN');
  return token;
}

/** Exact origins as browsers send them (`https://www.example.com`), or `*` alone. */
function corsOrigins(raw: string | undefined): string[] {
  const value = nonEmpty(raw);
  if (value === undefined) return [];
  const origins = [...new Set(value.split(',').map((s) => s.trim()))].filter(Boolean);
  if (origins.includes('*')) {
    if (origins.length > 1) throw new ConfigError('FUNIL_CORS_ORIGINS: * allows every origin and must stand alone');
    return origins;
  }
  const bad = origins.find((origin) => !isExactOrigin(origin));
  if (origins.length === 0 || bad !== undefined) {
    throw new ConfigError(
      `FUNIL_CORS_ORIGINS must be a comma list of origins such as https://www.example.com (scheme, lower-case host, optional port; no path or trailing slash), got "${bad ?? value}"`,
    );
  }
  return origins;
}

function isExactOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === origin;
  } catch {
    return false;
  }
}

const STATUS_PATTERN = /^[a-z0-9_-]{1,50}$/;

function leadStatuses(raw: string | undefined): string[] {
  const value = nonEmpty(raw);
  if (value === undefined) return [...DEFAULT_LEAD_STATUSES];
  const statuses = [...new Set(value.split(',').map((s) => s.trim()))].filter(Boolean);
  const bad = statuses.find((s) => !STATUS_PATTERN.test(s));
  if (statuses.length === 0 || bad !== undefined) {
    throw new ConfigError(
      'FUNIL_LEAD_STATUSES must be a comma list of lower-case words (a-z, 0-9, _ or -, up to 50 chars each)',
    );
  }
  return statuses;
}

function retryDelays(raw: string | undefined): number[] {
  const given = nonEmpty(raw);
  if (given === undefined) return DEFAULT_WEBHOOK_RETRY_DELAYS_SEC;
  const delays = given.split(',').map((part) => part.trim());
  if (delays.length > 20 || delays.some((delay) => !/^\d+$/.test(delay) || Number(delay) > 7 * 86_400)) {
    throw new ConfigError(
      `FUNIL_WEBHOOKS_RETRY_DELAYS must be up to 20 comma-separated numbers of seconds (each at most 604800), got "${given}"`,
    );
  }
  return delays.map(Number);
}

function secretKey(raw: string | undefined): Buffer | undefined {
  const given = nonEmpty(raw);
  if (given === undefined) return undefined;
  const key = Buffer.from(given, 'base64');
  if (key.length !== 32) {
    throw new ConfigError('FUNIL_WEBHOOKS_SECRET_KEY must be 32 bytes in base64 (openssl rand -base64 32)');
  }
  return key;
}
