import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may never be sent (SPEC §15): every range of IANA's special-purpose address
 * registries, "IANA IPv4 Special-Purpose Address Registry" and "IANA IPv6 Special-Purpose Address
 * Registry" (RFC 6890 and its updates), as published in 2026 — those marked globally reachable
 * included, since no receiver of events lives at an anycast relay — with multicast, the reserved
 * class E, IPv6 site-local (deprecated, RFC 3879) and IPv4-compatible forms (deprecated, RFC 4291)
 * besides. Each has the name a refusal gives instead of the address (a name must never tell the
 * caller what it resolved to inside a network).
 */
const SPECIAL_RANGES: readonly (readonly [cidr: string, name: string])[] = [
  ['0.0.0.0/8', 'this network'],
  ['10.0.0.0/8', 'private-use'],
  ['100.64.0.0/10', 'shared address space'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private-use'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.31.196.0/24', 'AS112'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast'],
  ['192.168.0.0/16', 'private-use'],
  ['192.175.48.0/24', 'AS112 direct delegation'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible'],
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['64:ff9b:1::/48', 'NAT64 local-use'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy prefix'],
  ['2001::/23', 'IETF protocol assignments'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
];

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const PARSED = SPECIAL_RANGES.map(([cidr, name]) => ({ cidr: ipaddr.parseCIDR(cidr) as Cidr, name }));
/** NAT64's well-known prefix (RFC 6052): it reaches the IPv4 address it carries, judged as that one. */
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96') as Cidr;

/** Every range, for the tests that try each one. */
export const SPECIAL_CIDRS: readonly string[] = SPECIAL_RANGES.map(([cidr]) => cidr);

/**
 * The name of the special-purpose range `address` lies in, or undefined for an ordinary public
 * unicast address. An IPv4-mapped address (outside the registries' own rule for it) and a NAT64
 * one are judged by the IPv4 address they carry; anything ipaddr.js does not call unicast is
 * refused too, as "reserved".
 */
export function specialRangeOf(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  // Through the URL parser first: ipaddr.js reads "::a.b.c.d" (IPv4-compatible) as IPv4-mapped.
  const parsed = ipaddr.parse(family === 6 ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return specialRangeOf(v6.toIPv4Address().toString());
    if (v6.match(NAT64)) {
      const bytes = v6.toByteArray().slice(12);
      const carried = specialRangeOf(bytes.join('.'));
      return carried === undefined ? undefined : `NAT64 of ${carried}`;
    }
  }
  for (const { cidr, name } of PARSED) if (parsed.kind() === cidr[0].kind() && parsed.match(cidr)) return name;
  return parsed.range() === 'unicast' ? undefined : 'reserved';
}

/** The rule of the first special address among `addresses` (a name's lookup), or undefined when all are public. */
export function specialRangeAmong(addresses: readonly string[]): string | undefined {
  for (const address of addresses) {
    const rule = specialRangeOf(address);
    if (rule !== undefined) return rule;
  }
  return undefined;
}
