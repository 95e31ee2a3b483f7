/**
 * What the environment gives a routes file: the `default` upstream's URL and audience, and the
 * timeout of upstreams that set none. The start (gateway.ts) and a reload (route-table/reload.ts)
 * compile with the same, so a file means the same thing on a reload as at start.
 */
import type { Config } from '../config/config.js';
import type { LoadContext } from './load.js';

/** `upstreamUrl`: AUTHGATE_UPSTREAM_URL, or the upstream the gateway was handed (development's example, tests). */
export function routeLoadContext(config: Config, upstreamUrl: string): LoadContext {
  return {
    defaultUpstreamUrl: upstreamUrl,
    upstreamTimeoutMs: config.upstream.timeoutMs,
    defaultAudience: config.identity.mode === 'on' ? config.identity.audience : undefined,
  };
}
