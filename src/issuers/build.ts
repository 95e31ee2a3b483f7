/**
 * The trusted issuers' part of the composition root (gateway.ts): the registry that follows the
 * live table's issuers and their keys, the provider-token resolver, and their metrics.
 */
import { createIssuerTokenResolver } from '../credentials/issuer-tokens.js';
import type { Metrics } from '../observability/metrics.js';
import type { LiveRouteTable } from '../route-table/live.js';
import type { ExternalIdStore } from '../store/external-ids.js';
import type { InvalidationBus } from '../store/invalidation.js';
import type { Store } from '../store/store.js';
import { createIssuerRegistry } from './registry.js';

export function buildIssuers(deps: {
  routes: LiveRouteTable;
  store: Store & ExternalIdStore;
  bus: InvalidationBus;
  cache: Readonly<{ max: number; ttlSeconds: number; negativeTtlSeconds: number }>;
  metrics: Metrics;
  now: () => number;
}) {
  const { metrics } = deps;
  const registry = createIssuerRegistry(
    deps.routes,
    {
      onFetch: (issuer, result) => metrics.issuerKeyFetches.inc({ issuer, result }),
      onKeys: (issuer, count) => metrics.issuerKeys.set({ issuer }, count),
      onIntrospection: (issuer, result) => metrics.issuerIntrospections.inc({ issuer, result }),
    },
    deps.now,
  );
  const tokens = createIssuerTokenResolver({
    registry,
    store: deps.store,
    bus: deps.bus,
    cache: deps.cache,
    now: deps.now,
    onRefused: (issuer, reason) => metrics.issuerTokenRefusals.inc({ issuer, reason }),
  });
  return { registry, tokens };
}
