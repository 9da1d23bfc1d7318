import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

const TOKEN_PREFIX = 'fnl_';
/** `fnl_` + at least 43 URL-safe characters (≥ 256 bits), SPEC §5. */
const TOKEN_SHAPE = /^fnl_[A-Za-z0-9_-]{43,200}$/;

export interface NewTokenSecret {
  token: string;
  hash: string;
  prefix: string;
}

export function generateTokenSecret(): NewTokenSecret {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token), prefix: token.slice(0, 8) };
}

export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

export function looksLikeToken(value: string): boolean {
  return TOKEN_SHAPE.test(value);
}

/** The bearer credential of an Authorization header, or undefined when there is none. */
export function bearerOf(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer[ \t]+(\S+)[ \t]*$/i);
  return match?.[1];
}

/** Compares two secrets in constant time (their hashes have equal length whatever the inputs). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
