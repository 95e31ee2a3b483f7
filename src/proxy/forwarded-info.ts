import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import proxyAddr from '@fastify/proxy-addr';
import type { TrustProxy } from '../request/trust-proxy.js';
import type { ForwardedInfo } from './identity-headers.js';

/**
 * What the gateway tells the upstream about the client (X-Forwarded-For, -Proto and -Host), from
 * the raw request and AUTHGATE_TRUST_PROXY: one function for both ways a forwarded request goes
 * (the fast lane never builds fastify's request), computed as fastify computes `request.ips`,
 * `request.protocol` and `request.host` with the same option (its lib/request.js, with the same
 * @fastify/proxy-addr), so that the login throttle's address and the upstream's agree.
 *
 * - X-Forwarded-For: the client as the trusted chain names it, then each trusted proxy after it,
 *   ending with the direct peer; without trust, the direct peer alone.
 * - X-Forwarded-Proto and -Host: the last value a trusted direct peer sent, else the gateway's own
 *   (its socket's TLS, the Host header).
 */
export function forwardedInfoOf(trust: TrustProxy): (request: IncomingMessage) => ForwardedInfo {
  if (trust === false) {
    return (request) => {
      const socket = request.socket;
      const host = request.headers.host;
      return { for: socket.remoteAddress ?? 'unknown', proto: ownProto(request), host: host === undefined || host === '' ? undefined : host };
    };
  }
  const trusted = trust === true ? () => true : typeof trust === 'string' ? proxyAddr.compile(trust.split(',').map((value) => value.trim())) : trust;
  return (request) => {
    const headers = request.headers;
    const peer = request.socket.remoteAddress;
    const peerTrusted = peer !== undefined && trusted(peer, 0);
    const ips = proxyAddr.all(request, trusted);
    let chain = ips[ips.length - 1] ?? 'unknown';
    for (let i = ips.length - 2; i >= 0; i--) chain += `, ${ips[i] ?? 'unknown'}`;
    const claimedProto = peerTrusted && headers['x-forwarded-proto'] ? lastEntry(headers['x-forwarded-proto']) : undefined;
    const proto = claimedProto === 'https' || claimedProto === 'http' ? claimedProto : ownProto(request);
    const forwardedHost = headers['x-forwarded-host'];
    const host = peerTrusted && typeof forwardedHost === 'string' && forwardedHost !== '' ? lastEntry(forwardedHost) : (headers.host ?? '');
    return { for: chain, proto, host: host === '' ? undefined : host };
  };
}

function ownProto(request: IncomingMessage): 'http' | 'https' {
  return (request.socket as TLSSocket).encrypted === true ? 'https' : 'http';
}

/** The last of a header's comma-separated values: the one the nearest proxy added. */
function lastEntry(value: string | string[]): string {
  const joined = Array.isArray(value) ? value.join(',') : value;
  const comma = joined.lastIndexOf(',');
  return (comma === -1 ? joined : joined.slice(comma + 1)).trim();
}
