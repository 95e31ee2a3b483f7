import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { sha256Base64url } from '../credentials/digest.js';

/**
 * The address the login limits count a client under. IPv4 as it is; IPv6 folded to its /64,
 * because one subscriber is routinely given a whole /64 and could otherwise step to a fresh
 * address (and fresh counters) for every guess; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`,
 * what a dual-stack listener reports for an IPv4 client) is its IPv4 address, so both spellings
 * share counters. Anything that is not an address (a trusted proxy may forward junk) is counted
 * under a short hash of its text, so a key never grows with what a client sent.
 *
 * node:net says what is an address (strictly: no legacy IPv4 forms such as `0x7f.1`); ipaddr.js
 * (the parser @fastify/proxy-addr uses for AUTHGATE_TRUST_PROXY) reads an IPv6 address's groups.
 * It costs about 1.3 times the hand-written parser it replaced (a same-process micro-benchmark,
 * alternating rounds, ratio of medians, issue 48), a few microseconds at most, paid only on the
 * routes that count by address (login, password and second-factor checks, leak reports, admin
 * refusals), never on a forwarded request.
 */
export function throttleAddress(ip: string | undefined): string {
  // undefined: node reports no remote address for a socket that is already gone.
  if (ip === undefined) return 'other:none';
  if (isIPv4(ip)) return ip;
  const zoneless = ip.split('%', 1)[0]!; // fe80::1%eth0: the zone names an interface, not a host
  // ipaddr.js's own check as well: an address it could not read is counted by its text, never a throw.
  if (isIPv6(zoneless) && ipaddr.IPv6.isValid(zoneless)) {
    const address = ipaddr.IPv6.parse(zoneless);
    if (address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
    return `${address.parts.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
  }
  return `other:${sha256Base64url(ip).slice(0, 16)}`;
}
