// The composition root: builds the gateway's parts from its config and wires them (buildGateway).
import { createScopedDocument } from './http/openapi-scopes.js';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from './config/config.js';
import { createCredentialCache, followRevocations } from './credentials/cache.js';
import { createTokenService } from './credentials/jwt.js';
import { createPasswordPolicy } from './credentials/password-policy.js';
import { createPasswordHasher } from './credentials/passwords.js';
import { createResolver } from './credentials/resolver.js';
import { buildIssuers } from './issuers/build.js';
import { createAuditTrail, type AuditTrail } from './audit/trail.js';
import { actorCompletion } from './audit/actor-details.js';
import { concernedMembers } from './notices/member-concerned.js';
import { createNoticeDelivery, type DeliveryTuning, type NoticeDelivery } from './notices/delivery.js';
import { withNotices } from './notices/noticing-trail.js';
import { createAdminRefusalThrottle } from './guards/admin-refusal-throttle.js';
import { createLeakReportThrottle } from './guards/leak-report-throttle.js';
import { createLoginThrottle } from './guards/login-throttle.js';
import { createResetThrottle } from './guards/reset-throttle.js';
import { createSecondFactorBound } from './guards/second-factor-bound.js';
import { createRateLimitCheck } from './limits/enforce.js';
import { createRateLimiter } from './limits/limiter.js';
import { createRateLimitPolicy } from './limits/policy.js';
import { createOrganizationPlans } from './plans/organization-plans.js';
import { createPlanService } from './services/organization-plans.js';
import { createRouteLimitCheck } from './limits/route-limit.js';
import { createForwardedDocs, type ForwardedDocsOptions } from './proxy/forwarded-docs.js';
import { createEdgeDecider } from './edge-authz/decider.js';
import type { EdgeDecider } from './edge-authz/decision.js';
import { trustedPeers, type PeerTrust } from './edge-authz/peers.js';
import { createEdgeRecorder, type EdgeRecorder } from './edge-authz/record.js';
import { createAuthzHttpServer, type AuthzHttpServer } from './edge-authz/http-server.js';
import { buildOpsServer } from './http/ops-server.js';
import { buildPublicServer } from './http/public-server.js';
import { createAccessLog } from './observability/access-log.js';
import { createHealth, type Health } from './observability/health.js';
import { instrument } from './observability/instrumentation.js';
import { createLogSink } from './observability/log-sink.js';
import { createLogger, type Logger } from './observability/logging.js';
import { createMetrics, registerOpenApiMetric, type Metrics } from './observability/metrics.js';
import { traced } from './tracing/tracing.js';
import { registerRouteMetrics } from './observability/route-metrics.js';
import { LEAK_REPORTS } from './routes/leaked-keys.js';
import { createApiKeyService } from './services/api-keys.js';
import { createOrganizationService } from './services/organizations.js';
import { createRateLimitService } from './services/rate-limits.js';
import { createKeyUsageTracker, type KeyUsageTracker } from './services/key-usage.js';
import { createSessionService } from './services/sessions.js';
import { createPasswordChangeService } from './services/password-changes.js';
import { createProfileService } from './services/organization-profiles.js';
import { createMfaService } from './services/mfa.js';
import { createSecretBox } from './credentials/mfa-secrets.js';
import { createPasskeyService } from './services/passkeys.js';
import { createMemberService } from './services/members.js';
import { createTenantGrowth } from './guards/tenant-growth.js';
import { buildIdentity, buildTracing, initialRouteTable, openStorage, type Storage } from './gateway-parts.js';
import { routeLoadContext } from './route-table/context.js';
import { createLiveRouteTable, type LiveRouteTable } from './route-table/live.js';
import type { ReloadResult, ReloadTrigger } from './route-table/reload.js';
import { reloadRoutesFile } from './route-table/reload-file.js';
import type { RouteTable } from './route-table/types.js';
import { buildQuotaParts, type QuotaParts } from './gateway-quotas.js';

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
  // The argon2 queue is this gateway's: a burst on one gateway never queues another's logins.
  const passwords = traced(createPasswordHasher(), tracing, { hash: 'argon2.hash', verify: 'argon2.verify' });
  const growth = createTenantGrowth(store, config.tenantLimits);
  const sessions = await createSessionService({ store, bus, tokens, passwords, now, growth, members: store });
  const trail = createAuditTrail({ store, retention: config.audit, now, logger, onWriteFailed: (events) => metrics.auditWriteFailures.inc(events), completeActors: actorCompletion(store) });
  const notices = config.notices && createNoticeDelivery({
    ...config.notices,
    organization: async (orgId) => {
      const org = await store.findOrganizationById(orgId);
      return org && { id: org.id, name: org.name, email: org.email };
    },
    member: concernedMembers(store),
    now,
    logger,
    count: (outcome) => metrics.notices.inc({ outcome }),
    tuning: deps.noticeTuning,
  });
  const audit = notices === undefined ? trail : withNotices(trail, notices, now);
  const keyUsage = createKeyUsageTracker({ store, now, logger, flushIntervalMs: deps.keyUseFlushMs });

  // Plans (issue 47): which organizations have a plan of their own, in memory (read again when announced).
  const plans = await createOrganizationPlans({ store, bus, logger, onFallback: (plan) => metrics.planFallbacks.inc({ plan }) });
  // Rate limits: the overrides in memory (read again when announced), budget leased per credential.
  const rateLimits = await createRateLimitPolicy({
    store,
    bus,
    defaultLimit: config.rateLimit.default,
    logger,
    planLimit: (orgId) => plans.planOf(orgId, routes.current())?.rateLimit,
  });
  const replica = randomUUID();
  // The leases of both limiters are children of the request's span (tracing on only).
  const leaseStore = traced(store, tracing, { leaseRateBudget: 'rate_limit.lease' });
  const limiter = createRateLimiter({ store: leaseStore, replica, now, onLease: (outcome) => metrics.rateLimitLeases.inc({ outcome }) });
  // The routes' own limits (a routes file's `rateLimit`): windows of their own, leased the same way.
  const routeLimiter = createRateLimiter({ store: leaseStore, replica, now, onLease: (outcome) => metrics.rateLimitLeases.inc({ outcome }) });
  const limitOverrides = createRateLimitService({ store, policy: rateLimits });
  // Built here, at start: the blocklist is read once, and a missing one stops the start.
  const policy = createPasswordPolicy(config.passwords);
  // The live table is made below; these read it only when asked, after the start.
  const liveRoutes = { current: () => routes.current() };
  const planService = createPlanService({ store, plans, routes: liveRoutes });
  const organizations = createOrganizationService({
    store,
    bus,
    passwords,
    policy,
    now,
    rateLimits: limitOverrides,
    defaultKeyLimit: config.tenantLimits.maxKeys,
    plans: { lookup: plans, routes: liveRoutes, forget: planService.forget },
    issuerNames: () => routes.current().issuers,
  });
  const profiles = createProfileService({ store, bus });
  const members = createMemberService({ store, bus, passwords, policy, now });
  const passwordChanges = createPasswordChangeService({ store, bus, passwords, policy, sessions, now, resetTtlMs: config.passwords.resetTtlSeconds * 1000 });
  // The second factor (issue 32). Without a key (production, unset) nothing is sealed: a random
  // one stands in, so that no enrolment exists to need it (the routes refuse enrolment).
  const mfaKey = config.mfa.encryptionKey;
  // Passkeys: offered when the relying party is configured (config/webauthn.ts).
  const passkeys = createPasskeyService({ store, rp: config.webauthn === undefined ? undefined : { ...config.webauthn, name: config.jwt.issuer }, now, logger });
  const mfa = createMfaService({ store, bus, box: createSecretBox(mfaKey ?? randomUUID(), config.mfa.previousKeys), sessions, bound: createSecondFactorBound(store, config.mfa.failureLimit), now, issuer: config.jwt.issuer, passkeys });

  const health = createHealth(store, onStoreUp, { invalidationSubscribed: () => bus.subscribed });
  const quotas = await buildQuotaParts({ store, bus, now, logger, metrics, routes, plans, usageFlushMs: deps.usageFlushMs });
  const apiKeys = createApiKeyService({ store, bus, environment: config.environment, now, pendingUse: keyUsage.pendingUse, rateLimits: limitOverrides, growth, routes, plans, keyQuotas: quotas.keyQuotas });
  const routeMetrics = registerRouteMetrics(metrics.registry, routes);
  // A table from a file is kept live: the file is reloaded when it changes, and on SIGHUP.
  const reloading =
    config.routesFile === undefined
      ? undefined
      : reloadRoutesFile({ routes, path: config.routesFile.path, context: routeLoadContext(config, upstreamUrl), logger, count: routeMetrics.countReload, watch: true });
  const identity = await buildIdentity(config, upstreamUrl, store, now, routes, plans);
  // A changed name or e-mail (and 'all', after a resubscribe): the kept profiles and assertions go, on every replica.
  if (identity !== undefined) bus.onInvalidation((invalidation) => identity.asserter.invalidate(invalidation));

  const accessLog = createAccessLog(logger, logDestination);
  const publicServer = await buildPublicServer({
    config,
    routes,
    logger,
    accessLog,
    metrics,
    resolver,
    recordDecision,
    sessions,
    throttle: createLoginThrottle(store),
    apiKeys,
    leakReports: createLeakReportThrottle(store, LEAK_REPORTS),
    passwords: passwordChanges,
    profiles,
    mfa: { service: mfa, enrolment: mfaKey !== undefined, findOrganization: (orgId) => store.findOrganizationById(orgId), passkeys },
    passwordResets: createResetThrottle(store),
    keyUsage,
    audit,
    auditLog: store,
    members: { service: members, store },
    identity: identity === undefined ? undefined : traced(identity.asserter, tracing, { sign: 'identity.sign' }),
    publicJwks: identity !== undefined && config.identity.mode === 'on' && config.identity.jwksOnPublicPort ? identity.keys.jwks : undefined,
    rateLimit: createRateLimitCheck(rateLimits, limiter, () => metrics.rateLimitRefusals.inc()),
    rateLimits: { policy: rateLimits, limiter },
    quota: quotas.quota,
    noteUsage: quotas.usage.note,
    usage: quotas.reports,
    plans,
    routeLimits: { check: createRouteLimitCheck(routeLimiter, () => metrics.rateLimitRefusals.inc()), limiter: routeLimiter },
    tracing,
  });
  // The edge proxies' decision: the public port's resolver, limiters and asserter, so a credential,
  // its budget and its assertion are one whichever port a request is decided on.
  const edgeRecord = createEdgeRecorder(metrics, accessLog);
  const edge = {
    decide: createEdgeDecider({
      routes,
      resolver,
      recordDecision,
      noteKeyUse: keyUsage.note,
      rateLimits: { policy: rateLimits, limiter },
      plans,
      routeLimiter,
      onRateLimited: () => metrics.rateLimitRefusals.inc(),
      quota: quotas.quota,
      noteUsage: quotas.usage.note,
      identity: identity?.asserter,
      cacheSeconds: config.authz.cacheSeconds,
      record: edgeRecord,
      onFault: (error) => logger.error({ event: 'authz.fault', err: error }, 'the authorization decision failed'),
    }),
    trusted: trustedPeers(config.authz.trustedProxies),
    record: edgeRecord,
  };

  const authzServer = config.authz.port === undefined ? undefined : createAuthzHttpServer({ ...edge, tracing, onFault: (error) => logger.error({ event: 'authz.fault', err: error }, 'the authorization answer failed') });

  // The table's routes in the public OpenAPI document (the catch-all itself is hidden from it).
  const forwardedDocs = createForwardedDocs(routes, {
    onError: (error, table) => logger.error({ event: 'routes.openapi_failed', err: error, hash: table.hash, source: table.source }, `the route table ${table.hash} could not be documented: /openapi.json lists none of its routes`),
    describe: deps.openApiPaths,
  });
  registerOpenApiMetric(metrics, () => forwardedDocs.status().documented);
  const opsServer = await buildOpsServer({
    adminToken: config.admin.token,
    adminRefusals: createAdminRefusalThrottle(store),
    accessLog,
    logger,
    metrics,
    health,
    organizations,
    profiles,
    apiKeys,
    sessions,
    passwords: passwordChanges,
    mfa,
    plans: planService,
    members,
    audit,
    auditLog: store,
    usage: quotas.reports,
    publicOpenApi: createScopedDocument(() => forwardedDocs.complete(publicServer.swagger()), () => routes.current().scopes),
    jwks: identity?.keys.jwks,
    routes,
    routesDocumented: () => forwardedDocs.status().documented,
  });

  let closing: Promise<void> | undefined;
  return {
    publicServer,
    opsServer,
    logger,
    metrics,
    health,
    storage,
    keyUsage,
    audit,
    quotas,
    notices,
    routes,
    edge,
    authzServer,
    reloadRoutes: async (trigger) => reloading?.reload(trigger),
    startDraining: () => health.startDraining(),
    close: () =>
      (closing ??= (async () => {
        health.startDraining();
        await Promise.all([publicServer.close(), opsServer.close(), authzServer?.close()]);
        health.stop();
        reloading?.close();
        issuers.registry.close();
        limiter.close();
        routeLimiter.close();
        rateLimits.close();
        plans.close();
        // The uses noted since the last flush, before the store closes (failures are logged, not thrown).
        await keyUsage.close();
        await quotas.close();
        await audit.flush();
        // Before the store closes: each notice reads its organization when it is sent.
        await notices?.close();
        await bus.close();
        await storage.store.close();
        // Last: the spans of the requests just drained are exported (bounded: tracing/sdk.ts).
        await tracing?.shutdown();
      })()),
  };
}
