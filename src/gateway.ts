// The composition root: builds the gateway's parts from its config and wires them (buildGateway):
// here the order of the start and what the request paths share (the store, the credential cache,
// the route table); the services over the store in gateway-services.ts, the servers' wiring in
// gateway-servers.ts, the order of the close in gateway-shutdown.ts.
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from './config/config.js';
import { createCredentialCache, followRevocations } from './credentials/cache.js';
import { createTokenService } from './credentials/jwt.js';
import { createResolver } from './credentials/resolver.js';
import { buildIssuers } from './issuers/build.js';
import type { AuditTrail } from './audit/trail.js';
import type { DeliveryTuning, NoticeDelivery } from './notices/delivery.js';
import type { ForwardedDocsOptions } from './proxy/forwarded-docs.js';
import type { EdgeDecider } from './edge-authz/decision.js';
import type { PeerTrust } from './edge-authz/peers.js';
import type { EdgeRecorder } from './edge-authz/record.js';
import type { AuthzHttpServer } from './edge-authz/http-server.js';
import { createHealth, type Health } from './observability/health.js';
import { instrument } from './observability/instrumentation.js';
import { createLogSink } from './observability/log-sink.js';
import { createLogger, type Logger } from './observability/logging.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { traced } from './tracing/tracing.js';
import { registerRouteMetrics } from './observability/route-metrics.js';
import type { KeyUsageTracker } from './services/key-usage.js';
import { buildTracing, initialRouteTable, openStorage, type Storage } from './gateway-parts.js';
import { routeLoadContext } from './route-table/context.js';
import { createLiveRouteTable, type LiveRouteTable } from './route-table/live.js';
import type { ReloadResult, ReloadTrigger } from './route-table/reload.js';
import { reloadRoutesFile } from './route-table/reload-file.js';
import type { RouteTable } from './route-table/types.js';
import type { QuotaParts } from './gateway-quotas.js';
import { buildServers } from './gateway-servers.js';
import { buildServices } from './gateway-services.js';
import { closeGateway } from './gateway-shutdown.js';

export type { Storage } from './gateway-parts.js';

/** What a test (or main.ts) may hand in instead of what the config would build. */
export type GatewayDeps = Readonly<{
  storage: Storage;
  logDestination: DestinationStream;
  now: () => number;
  /** The upstream, where the config has none (development's bundled example, tests). */
  upstreamUrl: string;
  /** How often key uses are written (services/key-usage.ts KEY_USE_FLUSH_MS); tests shorten it. */
  keyUseFlushMs: number;
  /**
   * The route table to start with, compiled in-process (route-table/compile.ts), instead of the
   * built-in one: tests of several upstreams, public routes and precedence use it.
   */
  routes: RouteTable;
  /** The security notices' retry waits and bounds (notices/delivery.ts); tests shorten them. */
  noticeTuning: Partial<DeliveryTuning>;
  /** How a table's routes are documented (proxy/forwarded-docs.ts describeTable); a test hands in one that fails. */
  openApiPaths: ForwardedDocsOptions['describe'];
  /** How often usage counts are written (services/usage-recorder.ts USAGE_FLUSH_MS). */
  usageFlushMs: number;
}>;

export type Gateway = Readonly<{
  publicServer: FastifyInstance;
  opsServer: FastifyInstance;
  logger: Logger;
  metrics: Metrics;
  health: Health;
  storage: Storage;
  /** API-key uses noted on this replica (lastUsedAt), written once per KEY_USE_FLUSH_MS. */
  keyUsage: KeyUsageTracker;
  /** Security events, written to the store's audit log in batches. */
  audit: AuditTrail;
  /** Plans' quotas and usage figures (gateway-quotas.ts): tests flush the usage counts. */
  quotas: QuotaParts;
  /** The security notices' queue, where AUTHGATE_NOTIFY_WEBHOOK_URL is set. */
  notices: NoticeDelivery | undefined;
  /** The route table the request paths read; a reload swaps it. */
  routes: LiveRouteTable;
  /**
   * Reads the routes file again and swaps its table in (SIGHUP; the file's watcher does the same
   * by itself). Undefined without a routes file: the built-in table never changes.
   */
  reloadRoutes(trigger: ReloadTrigger): Promise<ReloadResult | undefined>;
  /**
   * The edge proxies' authorization (edge-authz/, issue 30): the one decider every protocol's
   * endpoint asks, the proxies it may answer (AUTHGATE_AUTHZ_TRUSTED_PROXIES), and the metric and
   * access line of an answer given without deciding (an untrusted peer, an unreadable request).
   */
  edge: Readonly<{ decide: EdgeDecider; trusted: PeerTrust; record: EdgeRecorder }>;
  /** The authorization port's HTTP endpoints (edge-authz/http-server.ts), un-started; undefined unless AUTHGATE_AUTHZ_PORT is set. */
  authzServer: AuthzHttpServer | undefined;
  /** Readiness fails from now on; in-flight requests go on. */
  startDraining(): void;
  /** Closes the servers (waiting for in-flight requests), then the store. */
  close(): Promise<void>;
}>;

/**
 * The composition root: the one place that names implementations. Builds two un-started
 * servers; only main.ts (or a test) listens.
 */
export async function buildGateway(config: Config, deps: Partial<GatewayDeps> = {}): Promise<Gateway> {
  const now = deps.now ?? Date.now;
  const logDestination = deps.logDestination ?? createLogSink(1);
  const logger = createLogger(config.log.level, logDestination).child({ environment: config.environment });
  const metrics = createMetrics(config.environment);
  const storage = deps.storage ?? (await openStorage(config, logger, now));
  const cache = createCredentialCache(config.cache);
  const { store, bus, recordDecision, onStoreUp } = instrument(storage, metrics, cache);
  followRevocations(cache, bus);
  // AUTHGATE_TRACING=on: the SDK loaded now (tracing/sdk.ts); off, nothing of it is loaded. The
  // children of a request's span: the store read of a cache miss, argon2, the lease, the signing.
  const tracing = await buildTracing(config, metrics);

  const tokens = await createTokenService({ ...config.jwt, environment: config.environment });
  const upstreamUrl = config.upstream.url ?? deps.upstreamUrl;
  if (upstreamUrl === undefined) throw new Error('no upstream: set AUTHGATE_UPSTREAM_URL');
  const routes = createLiveRouteTable(deps.routes ?? initialRouteTable(config, upstreamUrl));
  // Trusted issuers (issue 49): their keys fetched now, in the background; nothing waits on them.
  const issuers = buildIssuers({ routes, store, bus, cache: config.cache, metrics, now });
  const resolver = createResolver({ store: traced(store, tracing, { findApiKeyByHash: 'store.find_api_key', findSession: 'store.find_session' }), cache, tokens, environment: config.environment, now, issuerTokens: issuers.tokens });
  // The services over the store, the limits, the plans and the identity asserter (gateway-services.ts).
  const services = await buildServices({
    config,
    store,
    bus,
    tokens,
    routes,
    upstreamUrl,
    tracing,
    logger,
    metrics,
    now,
    keyUseFlushMs: deps.keyUseFlushMs,
    noticeTuning: deps.noticeTuning,
    usageFlushMs: deps.usageFlushMs,
  });
  const health = createHealth(store, onStoreUp, { invalidationSubscribed: () => bus.subscribed });
  const routeMetrics = registerRouteMetrics(metrics.registry, routes);
  // A table from a file is kept live: the file is reloaded when it changes, and on SIGHUP.
  const reloading =
    config.routesFile === undefined
      ? undefined
      : reloadRoutesFile({ routes, path: config.routesFile.path, context: routeLoadContext(config, upstreamUrl), logger, count: routeMetrics.countReload, watch: true });
  // The public port, the authorization port's decision and server, the ops port (gateway-servers.ts).
  const servers = await buildServers({ config, logger, logDestination, metrics, tracing, routes, resolver, recordDecision, store, health, services, openApiPaths: deps.openApiPaths });

  let closing: Promise<void> | undefined;
  return {
    publicServer: servers.publicServer,
    opsServer: servers.opsServer,
    logger,
    metrics,
    health,
    storage,
    keyUsage: services.keyUsage,
    audit: services.audit,
    quotas: services.quotas,
    notices: services.notices,
    routes,
    edge: servers.edge,
    authzServer: servers.authzServer,
    reloadRoutes: async (trigger) => reloading?.reload(trigger),
    startDraining: () => health.startDraining(),
    close: () => (closing ??= closeGateway({ health, servers, services, reloading, issuers: issuers.registry, bus, store: storage.store, tracing })),
  };
}
