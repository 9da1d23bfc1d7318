import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** What a webhook target may be; both false in production (SPEC §15). */
export interface TargetPolicy {
  readonly allowHttp: boolean;
  readonly allowPrivate: boolean;
}

const ECHO_LIMIT = 100;

/** Why a webhook URL is refused (a short sentence for a 400), or null when it is acceptable. */
export async function targetProblem(url: string, policy: TargetPolicy): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the URL is not valid';
  }
  const httpAllowed = policy.allowHttp && parsed.protocol === 'http:';
  if (parsed.protocol !== 'https:' && !httpAllowed) {
    return policy.allowHttp ? 'the URL must use http or https' : 'the URL must use https';
  }
  if (parsed.username || parsed.password) return 'the URL must not contain a user name or password';
  if (policy.allowPrivate) return null;

  const addresses = await addressesOf(parsed.hostname);
  if (addresses.length === 0) return 'the host does not resolve';
  const refused = addresses.find((address) => !isPublicAddress(address));
  return refused === undefined ? null : `the host resolves to a non-public address (${echo(refused)})`;
}

/** True only for ordinary unicast addresses; IPv4-mapped IPv6 is judged as the IPv4 it carries. */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  return ipaddr.process(address).range() === 'unicast';
}

async function addressesOf(hostname: string): Promise<string[]> {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) return [host];
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    return found.map((entry) => entry.address);
  } catch {
    return [];
  }
}

function echo(text: string): string {
  return text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text;
}
