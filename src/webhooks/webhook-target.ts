import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Text } from '../shared/messages.js';
import { specialRangeAmong, specialRangeOf } from './special-addresses.js';

/** What a webhook target may be; both false in production (SPEC §15). */
export interface TargetPolicy {
  readonly allowHttp: boolean;
  readonly allowPrivate: boolean;
}

/**
 * The name could not be looked up for now (the resolver timed out or failed): no verdict on the
 * URL, which may well be right. A 503 with Retry-After, never the 400 of a name that does not exist.
 */
export class TargetLookupUnavailable extends Error {
  constructor(readonly code: string) {
    super(`the host could not be looked up for now (${code})`);
  }
}

/** The answers of a lookup that say the name does not exist, or has no address: a verdict. */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME']);

type Resolve = (hostname: string, options: { all: true; verbatim: true }) => Promise<{ address: string }[]>;

/**
 * Why a webhook URL is refused (a short phrase for a 400, in both languages), or null when it is
 * acceptable; throws TargetLookupUnavailable when its name cannot be looked up for now.
 */
export async function targetProblem(
  url: string,
  policy: TargetPolicy,
  resolve: Resolve = lookup,
): Promise<Text | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { pt: 'a URL não é válida', en: 'the URL is not valid' };
  }
  const httpAllowed = policy.allowHttp && parsed.protocol === 'http:';
  if (parsed.protocol !== 'https:' && !httpAllowed) {
    return policy.allowHttp
      ? { pt: 'a URL deve usar http ou https', en: 'the URL must use http or https' }
      : { pt: 'a URL deve usar https', en: 'the URL must use https' };
  }
  if (parsed.username || parsed.password) {
    return { pt: 'a URL não pode conter usuário ou senha', en: 'the URL must not contain a user name or password' };
  }
  if (policy.allowPrivate) return null;

  const addresses = await addressesOf(parsed.hostname, resolve);
  if (addresses.length === 0) return { pt: 'o host não resolve', en: 'the host does not resolve' };
  // The rule, never the address: a name's private address is not for the caller to learn.
  const rule = specialRangeAmong(addresses);
  if (rule === undefined) return null;
  return {
    pt: `o host resolve para um endereço não público (${rule})`,
    en: `the host resolves to a non-public address (${rule})`,
  };
}

/** True only for ordinary public unicast addresses (special-addresses.ts). */
export function isPublicAddress(address: string): boolean {
  return specialRangeOf(address) === undefined;
}

async function addressesOf(hostname: string, resolve: Resolve): Promise<string[]> {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) return [host];
  try {
    const found = await resolve(host, { all: true, verbatim: true });
    return found.map((entry) => entry.address);
  } catch (error) {
    const code = String((error as NodeJS.ErrnoException).code ?? 'unknown');
    if (NO_SUCH_NAME.has(code)) return [];
    throw new TargetLookupUnavailable(code);
  }
}
