// What the composition root (gateway.ts) builds from the config alone: the store, the first route
// table, the identity assertion's signer and the tracing SDK. Apart so gateway.ts stays the wiring.
import type { Config } from './config/config.js';
import type { Logger } from './observability/logging.js';
import type { Metrics } from './observability/metrics.js';
import { readBuildInfo } from './observability/metrics.js';
import { createIdentityAsserter } from './identity/assertion.js';
import { loadIdentityKeys } from './identity/signing-keys.js';
import { BUILTIN_ROUTES_FILE } from './route-table/builtin.js';
import { compileRoutes } from './route-table/compile.js';
import { routeLoadContext } from './route-table/context.js';
import type { LiveRouteTable } from './route-table/live.js';
import type { PlanLookup } from './plans/organization-plans.js';
import type { RouteTable } from './route-table/types.js';
import { createLocalInvalidationBus, type InvalidationBus } from './store/invalidation.js';
import { createMemoryStore } from './store/memory-store.js';
import type { GatewayStore, Store } from './store/store.js';
import type { MemberStore } from './store/members.js';
import { loadTracing, type Tracing } from './tracing/tracing.js';

export type Storage = Readonly<{ store: GatewayStore; bus: InvalidationBus }>;

/** The SDK, loaded only with AUTHGATE_TRACING=on; its dropped spans counted in the gateway's metrics. */
export async function buildTracing(config: Config, metrics: Metrics): Promise<Tracing | undefined> {
  if (!config.tracing.enabled) return undefined;
  return loadTracing({
    recordOrgId: config.tracing.recordOrgId,
    serviceVersion: readBuildInfo().version,
    onDropped: (reason, spans) => metrics.tracingSpansDropped.inc({ reason }, spans),
  });
}

/**
 * The identity assertion's keys and signer, when it is on: `aud` defaults to the upstream's
 * origin, `iss` is the login tokens' issuer, and the organization's name and e-mail come from the
 * (instrumented) store.
 */
export async function buildIdentity(config: Config, upstreamUrl: string, store: Store & Pick<MemberStore, 'sessionMemberId'>, now: () => number, routes: LiveRouteTable, plans: PlanLookup) {
  if (config.identity.mode === 'off') return undefined;
  const keys = await loadIdentityKeys(config.identity.signingKey, config.identity.publishedKeys);
  const asserter = createIdentityAsserter({
    key: keys.signing,
    issuer: config.jwt.issuer,
    audience: config.identity.audience ?? new URL(upstreamUrl).origin,
    ttlSeconds: config.identity.ttlSeconds,
    environment: config.environment,
    now,
    organization: async (orgId) => {
      const org = await store.findOrganizationById(orgId);
      return org && { name: org.name, email: org.email };
    },
    max: config.cache.max,
    scopes: () => routes.current().scopes,
    plan: (orgId) => plans.planOf(orgId, routes.current()),
    sessionMember: (orgId, sessionId) => store.sessionMemberId(orgId, sessionId),
  });
  return { keys, asserter };
}

export async function openStorage(config: Config, logger: Logger, now: () => number): Promise<Storage> {
  if (config.store.kind === 'memory') return { store: createMemoryStore({ now }), bus: createLocalInvalidationBus() };
  // Loaded only when used, so the embedded default never loads ioredis.
  const { openRedisStorage } = await import('./store/redis/store.js');
  const { kind: _kind, ...connection } = config.store;
  // The store logs what it finds (redis_eviction_risk, invalidation_subscription_lost) itself.
  return openRedisStorage({ ...connection, environment: config.environment, now, logger });
}

/**
 * The first table: AUTHGATE_ROUTES_FILE as config/load.ts read and checked it (compiled again
 * here with the upstream the gateway was handed, where AUTHGATE_UPSTREAM_URL is unset), else the
 * built-in one: today's two routes to the one upstream.
 */
export function initialRouteTable(config: Config, upstreamUrl: string): RouteTable {
  const context = routeLoadContext(config, upstreamUrl);
  const compiled = config.routesFile === undefined
    ? compileRoutes(BUILTIN_ROUTES_FILE, { ...context, source: undefined })
    : compileRoutes(config.routesFile.file, { ...context, source: config.routesFile.path });
  if (!compiled.ok) {
    const errors = compiled.errors.map((e) => `${e.pointer}: ${e.message}`).join('; ');
    throw new Error(`the route table (${config.routesFile?.path ?? 'built in'}) does not compile: ${errors}`);
  }
  return compiled.table;
}

