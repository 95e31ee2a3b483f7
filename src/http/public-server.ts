// The public port's server: its pipeline, in the order a request meets it (buildPublicServer).
import type { OrganizationPlans } from '../plans/organization-plans.js';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import type { Config } from '../config/config.js';
import type { DecisionRecorder } from '../credentials/decisions.js';
import type { CredentialResolver } from '../credentials/resolver.js';
import { hasSettledResolution } from '../credentials/settled-resolution.js';
import { userAgentGuard } from '../guards/user-agent.js';
import type { AccessLog } from '../observability/access-log.js';
import type { Logger } from '../observability/logging.js';
import type { Metrics } from '../observability/metrics.js';
import { forwardedRoutes } from '../proxy/forward.js';
import { createRoleGuard } from '../members/role-guard.js';
import { registerAuthApi, type AuthApiDeps } from '../routes/auth-api.js';
import type { IdentityAsserter } from '../identity/assertion.js';
import type { Jwks } from '../identity/signing-keys.js';
import { jwksRoute } from '../routes/jwks.js';
import type { KeyUsageTracker } from '../services/key-usage.js';
import type { RateLimitCheck } from '../limits/enforce.js';
import type { RateLimiter } from '../limits/limiter.js';
import type { RateLimitPolicy } from '../limits/policy.js';
import { createFastPath } from '../proxy/fast-path.js';
import { createUpstreamPools } from '../proxy/upstream-pools.js';
import { createForwardedMethods } from '../proxy/forward.js';
import { createAuthenticate } from '../credentials/authenticate.js';
import type { RouteLimitCheck } from '../limits/route-limit.js';
import type { LiveRouteTable } from '../route-table/live.js';
import { forwardedInfoOf } from '../proxy/forwarded-info.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ADMISSION_SERVER_OPTIONS, admitRequests, hostProblem } from './admission.js';
import { noStore } from './cache-headers.js';
import { createCors } from './cors.js';
import { consoleRoutes } from './console.js';
import { createErrorHandler } from './error-handler.js';
import { publicDocumentOptions } from './openapi.js';
import { AUTH_BODY_LIMIT, useStrictJsonBodies } from './json-body.js';
import { registerLoadShedding } from './load-shedding.js';
import { recordRequest } from './record-request.js';
import { clientErrorHandler, expectationFailedHandler, frameworkErrorHandler, notFoundOrMethodNotAllowed, refuseUnrouted, shuttingDown, watchClosing } from './refusals.js';
import routePolicy from './route-policy.js';
import { HEADERS_TIMEOUT_MS, sharedServerOptions } from './server-options.js';
import type { Server as HttpsServer } from 'node:https';
import './request-context.js';
import { readTlsFiles, reloadTlsOnChange, TLS_MIN_VERSION } from './tls.js';
import { trustProxyOption } from './trust-proxy.js';
import type { Tracing } from '../tracing/tracing.js';
import type { QuotaGate } from '../limits/quota-check.js';
import type { UsageNote } from '../services/usage-recorder.js';

/** What the public port is handed: its own route modules' (routes/auth-api.ts), and the pipeline's. */
export type PublicServerDeps = AuthApiDeps & Readonly<{
  config: Config;
  /** The live route table both request paths read (route-table/live.ts); its swaps open and close upstream pools. */
  routes: LiveRouteTable;
  logger: Logger;
  /** The one line per request (observability/access-log.ts). */
  accessLog: AccessLog;
  metrics: Metrics;
  resolver: CredentialResolver;
  recordDecision: DecisionRecorder;
  /** Notes each allowed API-key request, for lastUsedAt (services/key-usage.ts). */
  keyUsage: Pick<KeyUsageTracker, 'note'>;
  /** Signs the identity sent upstream; undefined when the assertion is off. */
  identity: IdentityAsserter | undefined;
  /** Served at /.well-known/jwks.json when AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT=on. */
  publicJwks: Jwks | undefined;
  /** The credential's rate limit on forwarded routes (limits/enforce.ts). */
  rateLimit: RateLimitCheck;
  /** The organization's plan's quota on forwarded routes (limits/quota-check.ts). */
  quota: QuotaGate;
  /** Counts each credentialed forwarded request's outcome (services/usage-recorder.ts). */
  noteUsage: UsageNote;
  /** The same limits, for the fast lane (proxy/fast-path.ts), which spends only budget already held. */
  rateLimits: Readonly<{ policy: RateLimitPolicy; limiter: RateLimiter }>;
  /** The organizations' plans (plans/organization-plans.ts): what each organization's credentials may hold. */
  plans: OrganizationPlans;
  /** The routes' own rate limits (limits/route-limit.ts): the check, and its limiter for the fast lane. */
  routeLimits: Readonly<{ check: RouteLimitCheck; limiter: RateLimiter }>;
  /** AUTHGATE_TRACING=on (tracing/tracing.ts): a span per request; undefined: off. */
  tracing?: Tracing | undefined;
}>;

/** The public port. The order of work reads top to bottom, as a request meets it. */
export async function buildPublicServer(deps: PublicServerDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const tls = config.tls.mode === 'on' ? config.tls : undefined;
  // On every answer, whoever gives it: a hook, the router's refusals, node's parser's.
  const staticHeaders: Record<string, string> = { 'x-authgate-environment': config.environment };
  if (tls !== undefined) staticHeaders['strict-transport-security'] = 'max-age=31536000; includeSubDomains';
  const hsts = staticHeaders['strict-transport-security'];
  // Browser apps of other origins (AUTHGATE_CORS_ORIGINS): the allowed origin's headers go with
  // the others, on every answer to an actual request; preflights are answered in step 1.
  const cors = createCors(config.cors.origins);
  // With origins configured, every answer varies on Origin: the raw ones written outside fastify too.
  if (cors.varyOrigin) staticHeaders['vary'] = 'Origin';
  const stampHeaders = (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-request-id', request.id).header('x-authgate-environment', config.environment);
    if (hsts !== undefined) reply.header('strict-transport-security', hsts);
    cors.stamp(request, reply);
  };
  // After the reply is on the wire: the metric and the one log line (see step 6).
  const tracing = deps.tracing;
  const record = recordRequest(deps.metrics, deps.accessLog, deps.routes, tracing);
  const trustProxy = trustProxyOption(config.trustProxy);
  const app = Fastify({
    // A missing Host is refused by the first hook, as a problem (admission.ts), not by node.
    ...(tls ? { https: { ...readTlsFiles(tls), minVersion: TLS_MIN_VERSION, ...ADMISSION_SERVER_OPTIONS } } : { http: ADMISSION_SERVER_OPTIONS }),
    ...sharedServerOptions(deps.logger, tracing),
    trustProxy,
    bodyLimit: AUTH_BODY_LIMIT,
    // The router's refusals (an undecodable target) and node's parser's (an oversized header
    // block, a malformed request line) as problems, never echoing the raw target.
    frameworkErrors: frameworkErrorHandler(stampHeaders, record),
    clientErrorHandler: clientErrorHandler(staticHeaders),
    // Slow-loris: a client must send its headers, and its whole request, in bounded time
    // (requestTimeout and HEADERS_TIMEOUT_MS: server-options.ts).
    connectionTimeout: 0,
    keepAliveTimeout: 65_000, // above common load balancers' idle timeouts (60 s)
    // Headers stay within node's default 16 KiB: a larger Authorization is a 431 from node.
    routerOptions: { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 200 },
  });
  app.server.headersTimeout = HEADERS_TIMEOUT_MS;
  app.server.on('checkExpectation', expectationFailedHandler(staticHeaders));
  if (tls !== undefined) {
    const stop = reloadTlsOnChange(app.server as unknown as HttpsServer, tls, (outcome) =>
      deps.logger[outcome === 'reloaded' ? 'info' : 'error']({ event: `tls.${outcome}` }, `TLS certificate ${outcome === 'reloaded' ? 'reloaded' : 'reload failed'}`),
    );
    app.addHook('onClose', async () => stop());
  }

  app.decorateRequest('principal', null);
  app.decorateRequest('authDecision', null);
  app.decorateRequest('upstreamStartedAt', 0);
  app.decorateRequest('identityAssertion', null);
  app.decorateRequest('rateLimited', false);
  app.decorateRequest('forwardedRoute', null);
  app.decorateRequest('routeTable', null);
  // Every path is routed (the catch-all): 404 and 405 ask the route table too (http/refusals.ts).
  app.decorate('forwardedMethods', createForwardedMethods(deps.routes));
  app.setErrorHandler(createErrorHandler('authgate'));
  app.setNotFoundHandler(notFoundOrMethodNotAllowed);
  // The public API's document (served on the ops port): http/openapi.ts.
  await app.register(swagger, publicDocumentOptions());

  // 0. Every answer carries the request id, a refusal by the very first check included. A request
  // without Host, with two, or with one that is no host is refused (RFC 9112 §3.2). Once
  // close() has begun, a request on a kept-alive connection is sent elsewhere.
  const shutdown = watchClosing(app);
  app.addHook('onRequest', (request, reply, done) => {
    stampHeaders(request, reply);
    const badHost = hostProblem(request.raw);
    if (badHost !== undefined) return done(badHost);
    // A request the fast lane admitted before close() began, and hands on after reading its
    // credential, is in flight: it is answered, not refused.
    if (shutdown.closing && !hasSettledResolution(request.raw)) done(shuttingDown(reply));
    else done();
  });
  // 1. Every request, unknown paths included: User-Agent, before any other check. Then a CORS
  // preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered, 204, on any
  // path: before load shedding (it costs less than a refusal, and the actual request's 503 is
  // then one the app can read), the path guard and authentication (a browser sends no credential
  // with it), and so never forwarded. A browser always sends a User-Agent, so the guard before it
  // costs browsers nothing and keeps the interface's rule for every request.
  app.addHook('onRequest', userAgentGuard);
  app.addHook('onRequest', cors.preflight);
  // Under overload, refuse at once rather than queue without bound.
  await registerLoadShedding(app, config.shedding);
  // An unknown route or method is refused here, before its body would be parsed (http/refusals.ts).
  app.addHook('onRequest', refuseUnrouted);
  // A route with a body runs its handler from the body's events: its span made current again,
  // so argon2, the store and the lease are its children (tracing on only).
  if (tracing !== undefined) app.addHook('preHandler', (request, _reply, done) => tracing.resume(request.raw, done));
  // 2-3. Authentication and authorization, fixed per route from its config.auth.
  await app.register(routePolicy, { resolver: deps.resolver, record: deps.recordDecision, noteKeyUse: deps.keyUsage.note });

  // 4. The gateway's own routes, with strict JSON bodies.
  await app.register(async (auth) => {
    useStrictJsonBodies(auth);
    // Their answers carry tokens, key secrets and what only the credential may see: never stored.
    auth.addHook('onRequest', noStore);
    // A login token acts as its member: the member's role must allow the route (members/role-guard.ts).
    auth.addHook('preValidation', createRoleGuard(deps.members.store));
    // Every /auth route module, each with what it is handed (routes/auth-api.ts).
    await registerAuthApi(auth, deps);
  });
  if (deps.publicJwks !== undefined) await app.register(jwksRoute, { jwks: deps.publicJwks, public: true });
  // The self-service console: static files that call the routes above, like any client.
  if (config.console.enabled) await app.register(consoleRoutes, {});

  // 5. The route table: matched, authenticated and authorized by route, rate limits, identity
  // injection and the proxy. One client per upstream origin for both ways a forwarded request can
  // go (the framework's and the fast lane's), opened and closed as tables are swapped in, all
  // closed once the server has drained (fastify's onClose runs after the last request ended).
  const pools = createUpstreamPools(deps.routes);
  const forwardedInfo = forwardedInfoOf(trustProxy);
  app.addHook('onClose', async () => pools.close());
  await app.register(forwardedRoutes, {
    routes: deps.routes,
    metrics: deps.metrics,
    pools,
    forwardedInfo,
    identity: deps.identity,
    authenticate: createAuthenticate(deps.resolver, deps.recordDecision, deps.keyUsage.note),
    rateLimit: deps.rateLimit,
    plans: deps.plans,
    routeLimit: deps.routeLimits.check,
    quota: deps.quota,
    noteUsage: deps.noteUsage,
    varyOrigin: cors.varyOrigin,
    tracing,
  });

  // 6. After the reply is on the wire: the metric and the one log line.
  app.addHook('onResponse', record);

  // The fast lane: a forwarded request that needs no refusal and no wait but its credential's
  // store read skips the framework (proxy/fast-path.ts); everything else reaches fastify's own
  // handler, untouched.
  const [framework] = app.server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
  if (framework === undefined) throw new Error('fastify attached no request handler');
  // Behind the admission of bodies (http/admission.ts): `Expect: 100-continue` is answered when
  // the body is first read, and a refusal past the drain bound closes the connection.
  // With tracing on, each request's server span begins before anything else is done with it.
  const fastPath = createFastPath({
    routes: deps.routes,
    pools,
    routeLimiter: deps.routeLimits.limiter,
    forwardedInfo,
    environment: config.environment,
    hsts,
    varyOrigin: cors.varyOrigin,
    resolver: deps.resolver,
    recordDecision: deps.recordDecision,
    noteKeyUse: deps.keyUsage.note,
    noteUsage: deps.noteUsage,
    quota: deps.quota,
    rateLimits: deps.rateLimits,
    plans: deps.plans,
    identity: deps.identity,
    metrics: deps.metrics,
    record: record.record,
    tracing,
    closing: () => shutdown.closing,
    overloaded: () => (app as unknown as { isUnderPressure?: () => boolean }).isUnderPressure?.() === true,
    framework,
  });
  admitRequests(app.server, tracing === undefined ? fastPath : tracing.serve(fastPath, tls === undefined ? 'http' : 'https'));
  return app;
}
