import { isIPv4, isIPv6 } from 'node:net';
import { sha256Base64url } from '../credentials/digest.js';

/**
 * The address the login limits count a client under. IPv4 as it is; IPv6 folded to its /64,
 * because one subscriber is routinely given a whole /64 and could otherwise step to a fresh
 * address (and fresh counters) for every guess; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`,
 * what a dual-stack listener reports for an IPv4 client) is its IPv4 address, so both spellings
 * share counters. Anything that is not an address (a trusted proxy may forward junk) is counted
 * under a short hash of its text, so a key never grows with what a client sent.
 */
export function throttleAddress(ip: string | undefined): string {
  // undefined: node reports no remote address for a socket that is already gone.
  if (ip === undefined) return 'other:none';
  if (isIPv4(ip)) return ip;
  const zoneless = ip.split('%', 1)[0]!; // fe80::1%eth0: the zone names an interface, not a host
  if (isIPv6(zoneless)) {
    const groups = ipv6Groups(zoneless);
    if (isIPv4Mapped(groups)) {
      return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
    }
    return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
  }
  return `other:${sha256Base64url(ip).slice(0, 16)}`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function ipv6Groups(ip: string): number[] {
  let text = ip.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function isIPv4Mapped(groups: readonly number[]): boolean {
  return groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
}
