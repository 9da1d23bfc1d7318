import { resolve } from 'node:path';

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
  readonly adminToken: string | undefined;
  readonly bootstrap: boolean;
  readonly leadStatuses: readonly string[];
  readonly trustProxy: boolean;
  /** Requests per minute per token on the external API (SPEC §10). */
  readonly rateLimit: number;
  /** Requests per minute per client address on the admin API. */
  readonly adminRateLimit: number;
  /** Where rate-limit counters live when several instances share them; in memory when absent. */
  readonly redisUrl: string | undefined;
}

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
    adminToken,
    bootstrap: boolean(env, 'FUNIL_BOOTSTRAP', nodeEnv !== 'production'),
    leadStatuses: Object.freeze(leadStatuses(env.FUNIL_LEAD_STATUSES)),
    trustProxy: boolean(env, 'FUNIL_TRUST_PROXY', false),
    rateLimit: integer(env, 'FUNIL_RATE_LIMIT', 1200, 1, 10_000_000),
    adminRateLimit: integer(env, 'FUNIL_ADMIN_RATE_LIMIT', 120, 1, 10_000_000),
    redisUrl: nonEmpty(env.REDIS_URL),
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

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
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
