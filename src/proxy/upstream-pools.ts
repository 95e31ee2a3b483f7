/**
 * The clients to the upstreams: one undici Pool per upstream origin of the live table, shared by
 * the fast lane (proxy/fast-path.ts) and the framework's path (reply-from in proxy/forward.ts), so
 * each origin has one set of keep-alive connections, not two (a second pool held its own sockets
 * and buffers, a few MiB of the gateway's memory under load). Up to 128 connections at once, one
 * request at a time on each: pipelining would let one slow answer hold up the requests queued
 * behind it on the same connection.
 *
 * Several upstreams: each origin gets its pool when a table naming it is swapped in; one no table
 * names any more is closed once the swap is some seconds old (undici's close() lets the requests
 * on it finish; the grace lets a request that matched the old table just before the swap, and is
 * still reading its credential, be sent on it too). Timeouts are each upstream's own, given with
 * every request (undici's per-request headersTimeout and bodyTimeout), so two upstreams of one
 * origin share connections and keep their timeouts.
 */
import { Dispatcher, Pool } from 'undici';
import type { LiveRouteTable } from '../route-table/live.js';
import type { CompiledUpstream, RouteTable } from '../route-table/types.js';

/** How long a pool no table names stays open for the requests that matched before the swap. */
export const RETIRED_POOL_GRACE_MS = 10_000;

export type UpstreamPools = Readonly<{
  /** The pool of an upstream of the live table or of one swapped out lately. */
  poolOf(upstream: CompiledUpstream): Dispatcher;
  /** One dispatcher for reply-from: sends each request to the pool of its origin. */
  dispatcher: Dispatcher;
  /** Closes every pool (waiting for requests on them): after the server has drained. */
  close(): Promise<void>;
}>;

/** The connect timeout's bound of a pool opened for an origin no table names (see poolOfOrigin). */
const DEFAULT_TIMEOUT_MS = 5_000;

function createPool(origin: string, timeoutMs: number): Pool {
  return new Pool(origin, {
    connections: 128,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: Math.min(timeoutMs, 5_000) },
  });
}

/** reply-from's client: it names the origin of each request (getUpstream), this finds its pool. */
class OriginRouter extends Dispatcher {
  private readonly poolOfOrigin: (origin: string) => Pool;

  constructor(poolOfOrigin: (origin: string) => Pool) {
    super();
    this.poolOfOrigin = poolOfOrigin;
  }
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.poolOfOrigin(typeof options.origin === 'string' ? options.origin : String(options.origin)).dispatch(options, handler);
  }
  override close(): Promise<void> {
    return Promise.resolve();
  }
  override destroy(): Promise<void> {
    return Promise.resolve();
  }
}

export function createUpstreamPools(routes: Pick<LiveRouteTable, 'current' | 'onSwap'>, options: { retireAfterMs?: number } = {}): UpstreamPools {
  const retireAfterMs = options.retireAfterMs ?? RETIRED_POOL_GRACE_MS;
  const pools = new Map<string, Pool>();
  const timers = new Set<NodeJS.Timeout>();
  // A request that matched a table retired past the grace (it waited that long for its
  // credential) gets a pool again rather than an error: closed again when a later swap retires it.
  const poolOfOrigin = (origin: string, timeoutMs = DEFAULT_TIMEOUT_MS): Pool => {
    let pool = pools.get(origin);
    if (pool === undefined) {
      pool = createPool(origin, timeoutMs);
      pools.set(origin, pool);
    }
    return pool;
  };
  const open = (table: RouteTable) => {
    for (const upstream of table.upstreams.values()) poolOfOrigin(upstream.origin, upstream.timeoutMs);
  };
  open(routes.current());
  routes.onSwap((table, previous) => {
    open(table);
    const named = new Set([...table.upstreams.values()].map((upstream) => upstream.origin));
    for (const upstream of previous.upstreams.values()) {
      const pool = pools.get(upstream.origin);
      if (named.has(upstream.origin) || pool === undefined) continue;
      const timer = setTimeout(() => {
        timers.delete(timer);
        // Named again by a later table meanwhile: kept.
        if (pools.get(upstream.origin) !== pool || [...routes.current().upstreams.values()].some((u) => u.origin === upstream.origin)) return;
        pools.delete(upstream.origin);
        void pool.close();
      }, retireAfterMs);
      timer.unref();
      timers.add(timer);
    }
  });
  return {
    poolOf: (upstream) => poolOfOrigin(upstream.origin, upstream.timeoutMs),
    dispatcher: new OriginRouter(poolOfOrigin),
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all([...pools.values()].map((pool) => pool.close()));
      pools.clear();
    },
  };
}
