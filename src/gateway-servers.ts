// How the composition root (gateway.ts) wires its servers from the parts it built: the public
// port, the edge proxies' decision (the public port's own resolver, limiters and asserter) and
// its HTTP server, and the ops port with the OpenAPI documents. Apart so gateway.ts reads as the
// order of the start, and a server's new dependency is handed in here, in one place.
import type { DestinationStream } from 'pino';
import type { Config } from './config/config.js';
import type { DecisionRecorder } from './credentials/decisions.js';
import type { CredentialResolver } from './credentials/resolver.js';
import { createEdgeDecider } from './edge-authz/decider.js';
import { createAuthzHttpServer } from './edge-authz/http-server.js';
import { trustedPeers } from './edge-authz/peers.js';
import { createEdgeRecorder } from './edge-authz/record.js';
import { createAdminRefusalThrottle } from './guards/admin-refusal-throttle.js';
import { createLeakReportThrottle } from './guards/leak-report-throttle.js';
import { createLoginThrottle } from './guards/login-throttle.js';
import { createResetThrottle } from './guards/reset-throttle.js';
import { createScopedDocument } from './openapi/scopes.js';
import { buildOpsServer } from './http/ops-server.js';
import { buildPublicServer } from './http/public-server.js';
import { createRateLimitCheck } from './limits/enforce.js';
import { createRouteLimitCheck } from './limits/route-limit.js';
import { createAccessLog } from './observability/access-log.js';
import type { Health } from './observability/health.js';
import type { Logger } from './observability/logging.js';
import { registerOpenApiMetric, type Metrics } from './observability/metrics.js';
import { createForwardedDocs, type ForwardedDocsOptions } from './proxy/forwarded-docs.js';
import type { LiveRouteTable } from './route-table/live.js';
import { LEAK_REPORTS } from './routes/leaked-keys.js';
import type { GatewayStore } from './store/store.js';
import { traced, type Tracing } from './tracing/tracing.js';
import type { GatewayServices } from './gateway-services.js';

export type ServerInputs = Readonly<{
  config: Config;
  logger: Logger;
  logDestination: DestinationStream;
  metrics: Metrics;
  tracing: Tracing | undefined;
  routes: LiveRouteTable;
  resolver: CredentialResolver;
  recordDecision: DecisionRecorder;
  /** The instrumented store (observability/instrumentation.ts). */
  store: GatewayStore;
  health: Health;
  services: GatewayServices;
  /** GatewayDeps.openApiPaths: how a table's routes are documented; a test hands in one that fails. */
  openApiPaths: ForwardedDocsOptions['describe'];
}>;

export type GatewayServers = Awaited<ReturnType<typeof buildServers>>;

export async function buildServers(inputs: ServerInputs) {
  const { config, logger, metrics, tracing, routes, resolver, recordDecision, store, health, services } = inputs;
  const { identity, quotas, rateLimits, limiter, routeLimiter, plans, keyUsage, audit } = services;
  const accessLog = createAccessLog(logger, inputs.logDestination);
  const publicServer = await buildPublicServer({
    config,
    routes,
    logger,
    accessLog,
    metrics,
    resolver,
    recordDecision,
    sessions: services.sessions,
    throttle: createLoginThrottle(store),
    apiKeys: services.apiKeys,
    leakReports: createLeakReportThrottle(store, LEAK_REPORTS),
    passwords: services.passwordChanges,
    profiles: services.profiles,
    mfa: { service: services.mfa, enrolment: services.mfaEnrolment, findOrganization: (orgId) => store.findOrganizationById(orgId), passkeys: services.passkeys },
    passwordResets: createResetThrottle(store),
    keyUsage,
    audit,
    auditLog: store,
    members: { service: services.members, store },
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
      speedTricks: config.authzSpeedTricks,
      onFault: (error) => logger.error({ event: 'authz.fault', err: error }, 'the authorization decision failed'),
    }),
    trusted: trustedPeers(config.authz.trustedProxies),
    record: edgeRecord,
    speedTricks: config.authzSpeedTricks,
  };

  const authzServer = config.authz.port === undefined ? undefined : createAuthzHttpServer({ ...edge, tracing, onFault: (error) => logger.error({ event: 'authz.fault', err: error }, 'the authorization answer failed') });

  // The table's routes in the public OpenAPI document (the catch-all itself is hidden from it).
  const forwardedDocs = createForwardedDocs(routes, {
    onError: (error, table) => logger.error({ event: 'routes.openapi_failed', err: error, hash: table.hash, source: table.source }, `the route table ${table.hash} could not be documented: /openapi.json lists none of its routes`),
    describe: inputs.openApiPaths,
  });
  registerOpenApiMetric(metrics, () => forwardedDocs.status().documented);
  const opsServer = await buildOpsServer({
    adminToken: config.admin.token,
    adminRefusals: createAdminRefusalThrottle(store),
    accessLog,
    logger,
    metrics,
    health,
    organizations: services.organizations,
    profiles: services.profiles,
    apiKeys: services.apiKeys,
    sessions: services.sessions,
    passwords: services.passwordChanges,
    mfa: services.mfa,
    plans: services.planService,
    members: services.members,
    audit,
    auditLog: store,
    usage: quotas.reports,
    publicOpenApi: createScopedDocument(() => forwardedDocs.complete(publicServer.swagger()), () => routes.current().scopes),
    jwks: identity?.keys.jwks,
    routes,
    routesDocumented: () => forwardedDocs.status().documented,
  });
  return { publicServer, opsServer, edge, authzServer };
}
