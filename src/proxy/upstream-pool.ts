import { Pool } from 'undici';

/**
 * The one client to the upstream, shared by the fast lane (proxy/fast-path.ts) and the
 * framework's path (reply-from in proxy/forward.ts): one set of keep-alive connections, not two
 * (a second pool held its own sockets and buffers, a few MiB of the gateway's memory under load).
 * Up to 128 connections at once, one request at a time on each: pipelining would let one slow
 * answer hold up the requests queued behind it on the same connection.
 */
export function createUpstreamPool(upstreamUrl: string, timeoutMs: number): Pool {
  return new Pool(new URL(upstreamUrl).origin, {
    connections: 128,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: Math.min(timeoutMs, 5_000) },
  });
}
