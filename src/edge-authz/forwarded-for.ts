import { isIP } from 'node:net';

/**
 * The client address an edge proxy appended to X-Forwarded-For: its last entry (earlier entries
 * are the client's own to write), taken only when it is an IP address; undefined otherwise, and
 * the caller falls back to what the proxy said elsewhere or to the proxy's own address. The one
 * rule of the HTTP endpoints (http-requests.ts) and the gRPC check (grpc/check-mapping.ts): a
 * public route's limit counts per this address, so a value a client shaped (`1.2.3.4, evil`, a
 * host name, an empty entry) must never become a bucket of its own.
 */
export function lastForwardedAddress(forwarded: string): string | undefined {
  if (forwarded === '') return undefined;
  const last = forwarded.slice(forwarded.lastIndexOf(',') + 1).trim();
  return isIP(last) !== 0 ? last : undefined;
}
