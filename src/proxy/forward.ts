import type { PlanLookup } from '../plans/organization-plans.js';
import type { IncomingMessage } from 'node:http';
import replyFrom, { type FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { routeRefusal } from '../authz/authorize.js';
import { methodOverrideRefusal } from '../authz/method-override.js';
import type { IdentityAsserter } from '../identity/assertion.js';
import type { Metrics } from '../observability/metrics.js';
import { Problem } from '../problems.js';
import type { RateLimitCheck } from '../limits/enforce.js';
import type { RouteLimitCheck } from '../limits/route-limit.js';
import { withQuotaHeaders, type QuotaGate } from '../limits/quota-check.js';
import type { QuotaVerdict } from '../limits/quota.js';
import { usageOutcomeOf, type UsageNote } from '../services/usage-recorder.js';
import type { ForwardedMethods } from '../request/refusals.js';
import { notFoundOrMethodNotAllowed } from '../request/refusals.js';
import { isWithin } from '../route-table/match.js';
import { pathRefusalProblem } from '../route-table/path-reading.js';
import { RESERVED_PREFIXES, type CompiledUpstream, type RouteTableSource } from '../route-table/types.js';
import { upstreamAnswerHeaders } from './answer-headers.js';
import { rewriteIdentityHeaders, type ForwardedInfo, type OutgoingHeaders } from './identity-headers.js';
import { isAmbiguousPath, pathGuard, pathOf } from '../request/path-guard.js';
import { upstreamProblem } from './upstream-errors.js';
import type { UpstreamPools } from './upstream-pools.js';
import type { Tracing } from '../tracing/tracing.js';

export { upstreamAnswerHeaders } from './answer-headers.js';

export type ForwardOptions = Readonly<{
  /** The live route table (route-table/live.ts): read once per request, when it is matched. */
  routes: RouteTableSource;
  metrics: Metrics;
  /** The upstreams' clients (proxy/upstream-pools.ts), shared with the fast lane; their owner closes them. */
  pools: UpstreamPools;
  /** X-Forwarded-* for a request, by AUTHGATE_TRUST_PROXY (proxy/forwarded-info.ts), as the fast lane sends them. */
  forwardedInfo: (request: IncomingMessage) => ForwardedInfo;
  /** Signs the identity assertion sent upstream; undefined when AUTHGATE_IDENTITY_ASSERTION=off. */
  identity: IdentityAsserter | undefined;
  /** The authenticate stage (credentials/authenticate.ts), run on the routes that take a credential. */
  authenticate: (request: FastifyRequest) => Promise<void>;
  /** The credential's rate limit (limits/enforce.ts), before anything else a forwarded request does. */
  rateLimit: RateLimitCheck;
  /** The organizations' plans (plans/organization-plans.ts): a credential holds its scopes within its plan's. */
  plans: PlanLookup;
  /** The route's own rate limit (limits/route-limit.ts), after the credential's. */
  routeLimit: RouteLimitCheck;
  /** The organization's plan's quota (limits/quota-check.ts), after both rate limits. */
  quota: QuotaGate;
  /** Usage figures (services/usage-recorder.ts): each credentialed request's outcome. */
  noteUsage: UsageNote;
  /** AUTHGATE_CORS_ORIGINS is set: every answer varies on Origin (request/cors.ts). */
  varyOrigin: boolean;
  /** AUTHGATE_TRACING=on: the upstream call's client span, its context in the upstream's traceparent. */
  tracing: Tracing | undefined;
}>;

/** The router constraint that keeps the catch-all off the gateway's own paths. */
const FORWARDABLE = 'authgateForwardable';

/**
 * The route table, forwarded with reply-from by one catch-all route: fastify's router is fixed
 * once the server is ready, and a reload swaps the table, so the table's own matcher
 * (route-table/match.ts) decides, the fast lane's too. The gateway's own routes are static paths,
 * which fastify's router prefers to the catch-all. Per request, in order:
 * - the table is read once and the path matched: no route is 404, a method the route does not
 *   list is 405 with Allow (never a broader route), and nothing reaches any upstream;
 * - the path guard (request/path-guard.ts), then the route's credentials: a public route reads none (its
 *   Authorization is not looked at, and removed with every identity header), any other
 *   authenticates, then authorizes by the route's kinds and the method's scope, and the scope of
 *   each method a method-override header names (authz/method-override.ts);
 * - the credential's rate limit, the route's, the identity assertion for the route's upstream;
 * - reply-from to the route's upstream: path and query untouched below the upstream URL's own
 *   path, bodies streamed, identity and forwarding headers rewritten.
 *
 * reply-from directly rather than @fastify/http-proxy over it: every prefix forwards to itself, so
 * the proxy's per-request rewriting of the path (three URL parses) has nothing to do here, and
 * what it guards against is refused before: pathGuard turns every dot segment, encoded slash or
 * backslash and absolute-form target into a 404 ahead of authentication, the table only matches
 * its paths, and reply-from itself refuses a `..` segment and keeps the upstream's origin.
 */
export async function forwardedRoutes(app: FastifyInstance, opts: ForwardOptions): Promise<void> {
  const tracing = opts.tracing;
  const rewriteRequestHeaders = (request: FastifyRequest, headers: OutgoingHeaders) => {
    request.upstreamStartedAt = performance.now(); // the request leaves for the upstream now
    const outgoing = rewriteIdentityHeaders(headers, request.principal, request.id, opts.forwardedInfo(request.raw), request.identityAssertion, request.routeTable!.scopes, request.principal === null ? undefined : opts.plans.planOf(request.principal.orgId, request.routeTable!));
    if (tracing !== undefined) tracing.upstream(request.raw, outgoing, request.forwardedRoute!.upstream.host);
    return outgoing;
  };
  const onError = (reply: FastifyReply, { error }: { error: Error & { statusCode?: number; code?: string } }) => {
    const problem = upstreamProblem(error);
    // A client that went (its body cut short, its connection closed while it waited) fails the
    // upstream request too; that is no failure of the upstream's, as the fast lane counts it.
    const clientGone = reply.request.raw.socket?.destroyed === true;
    const route = reply.request.forwardedRoute;
    if (!clientGone) opts.metrics.upstreamErrors.inc({ route: route?.label ?? 'unmatched', kind: problem.reason ?? 'unknown', upstream: route?.upstream.name ?? 'unknown' });
    reply.send(problem);
  };
  // The gateway's RateLimit headers, when it set them, are the answer's: the upstream's give way.
  // The upstream's Access-Control-* headers always do (request/cors.ts): AUTHGATE_CORS_ORIGINS alone
  // decides which browser apps may read the API, whether or not this request came from one. Its
  // cache headers become private to the credential (upstreamAnswerHeaders).
  const varyOrigin = opts.varyOrigin;
  const rewriteHeaders = (headers: OutgoingHeaders, request: FastifyRequest) => upstreamAnswerHeaders(headers, request.rateLimited, varyOrigin);
  // Made once per upstream: reply.from() reads them on every request. (reply-from's types also
  // cover HTTP/2 servers; this one is HTTP/1, hence the cast.)
  const replyOptions = new WeakMap<CompiledUpstream, FastifyReplyFromHooks>();
  const optionsOf = (upstream: CompiledUpstream): FastifyReplyFromHooks => {
    let options = replyOptions.get(upstream);
    if (options === undefined) {
      const origin = upstream.origin;
      options = {
        rewriteRequestHeaders,
        rewriteHeaders,
        onError,
        getUpstream: () => origin,
        // The upstream's own timeouts, on its origin's pool (several upstreams may share one).
        timeout: upstream.timeoutMs,
        // An upstream's 503 is the upstream's answer to give, not a reason to retry it.
        retryDelay: () => null,
      } as unknown as FastifyReplyFromHooks;
      replyOptions.set(upstream, options);
    }
    return options;
  };

  // The table's decision, before the path guard: a path no route takes is refused as the
  // router refused it before (404, or 405 with the methods of the gateway's own routes), and a
  // method the matched route does not list is 405 with its Allow.
  app.addHook('onRequest', (request, reply, done) => {
    const table = opts.routes.current();
    const url = request.raw.url ?? '';
    const reading = table.read(pathOf(url));
    const route = reading.route;
    // A path some server reads as another route's (route-table/path-reading.ts): 400, unless the
    // path guard's 404 is due (the authorization port answers in that order too).
    if (reading.refusal !== undefined && !isAmbiguousPath(url)) return done(pathRefusalProblem(reading.refusal));
    if (route === undefined || !route.methods.has(request.method)) return void notFoundOrMethodNotAllowed(request, reply);
    request.routeTable = table;
    request.forwardedRoute = route;
    done();
  });
  app.addHook('onRequest', pathGuard);

  // reply-from resolves the request's path against the upstream's origin as a URL, so the
  // upstream URL's path is put in front of the request's path here: `/accounts` → `/v1/accounts`.
  await app.register(replyFrom, {
    disableRequestLogging: true,
    undici: opts.pools.dispatcher as unknown as NonNullable<Parameters<typeof replyFrom>[1]>['undici'],
  });
  // Bodies stream to the upstream as they arrive: nothing on a forwarded route is parsed.
  const passThrough = (_request: FastifyRequest, payload: unknown, done: (err: null, body: unknown) => void) => done(null, payload);
  app.addContentTypeParser('application/json', passThrough);
  app.addContentTypeParser('*', passThrough);

  const forwardAs = (request: FastifyRequest, reply: FastifyReply) => {
    const upstream = request.forwardedRoute!.upstream;
    // No base path: reply-from takes the request's own path, and its query as it came; else the
    // path below the base path, reply-from still adding the query.
    return reply.from(upstream.basePath === '' ? undefined : upstream.basePath + pathOf(request.raw.url ?? '/'), optionsOf(upstream));
  };
  // With the identity assertion: the one kept for the credential and the route's upstream, on the
  // hot path without a promise; only when it must be signed (first use, half its lifetime gone) does the request wait.
  const identity = opts.identity;
  const forwardAsserted =
    identity === undefined
      ? forwardAs
      : (request: FastifyRequest, reply: FastifyReply) => {
          const principal = request.principal;
          if (principal === null) return forwardAs(request, reply); // a public route: nobody to assert
          const audience = request.forwardedRoute!.upstream.audience;
          const kept = identity.current(principal, audience);
          if (kept !== undefined) {
            request.identityAssertion = kept;
            return forwardAs(request, reply);
          }
          return identity.sign(principal, audience).then((signed) => {
            // The organization went between authentication and now: its credentials are revoked.
            if (signed === undefined) throw new Problem('credentialInvalid', undefined, 'revoked_token');
            request.identityAssertion = signed;
            return forwardAs(request, reply);
          });
        };
  // The rate limits first (the credential's, then the route's), then the quota: a refused request
  // costs no signing, never reaches the upstream and spends no quota.
  const { rateLimit, routeLimit, quota, noteUsage } = opts;
  const spent = (request: FastifyRequest, reply: FastifyReply, verdict: QuotaVerdict) => {
    // The gateway's RateLimit fields are the answer's: the upstream's give way (answer-headers.ts).
    request.rateLimited = true;
    const headers = { 'ratelimit-policy': reply.getHeader('ratelimit-policy') as string | undefined, ratelimit: reply.getHeader('ratelimit') as string | undefined };
    withQuotaHeaders(headers, verdict);
    reply.header('ratelimit-policy', headers['ratelimit-policy']).header('ratelimit', headers['ratelimit']);
    if (!verdict.allowed) throw quota.refusal(verdict);
    noteUsage(request.principal!, 'admitted');
    return forwardAsserted(request, reply);
  };
  const admitted = (request: FastifyRequest, reply: FastifyReply) => {
    const principal = request.principal;
    if (principal === null) return forwardAsserted(request, reply);
    const rule = quota.ruleOf(principal, request.routeTable!);
    if (rule === undefined) {
      noteUsage(principal, 'admitted');
      return forwardAsserted(request, reply);
    }
    const verdict = quota.spend(principal, rule, request.forwardedRoute!);
    return verdict instanceof Promise ? verdict.then((v) => spent(request, reply, v)) : spent(request, reply, verdict);
  };
  const limited = (request: FastifyRequest, reply: FastifyReply) => {
    const checked = routeLimit(request, request.forwardedRoute!);
    return checked === undefined ? admitted(request, reply) : checked.then(() => admitted(request, reply));
  };
  /** A refusal of a limit or the quota, counted in the organization's usage, then answered as it is. */
  const refused = (request: FastifyRequest, error: unknown): never => {
    const outcome = error instanceof Problem && request.principal !== null ? usageOutcomeOf(error) : undefined;
    if (outcome !== undefined) noteUsage(request.principal!, outcome);
    throw error;
  };
  const checkedForward = function (request: FastifyRequest, reply: FastifyReply) {
    if (request.principal === null) return limited(request, reply);
    const checked = rateLimit(request, reply);
    return checked === undefined ? limited(request, reply) : checked.then(() => limited(request, reply));
  };
  const forward = function (request: FastifyRequest, reply: FastifyReply) {
    try {
      const answered = checkedForward(request, reply);
      return answered instanceof Promise ? answered.catch((error: unknown) => refused(request, error)) : answered;
    } catch (error) {
      return refused(request, error);
    }
  };

  // Authentication and authorization by the matched route (http/route-policy.ts leaves this
  // route to the table: `auth: 'route-table'`).
  const authenticate = opts.authenticate;
  const authenticateRoute = async (request: FastifyRequest) => {
    if (request.forwardedRoute!.credentials.kind === 'none') return;
    await authenticate(request);
  };
  // The method's scope, then every method a method-override header names (authz/method-override.ts):
  // the upstream may serve the request as that method.
  const authorizeRoute = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const route = request.forwardedRoute!;
    const headers = request.raw.headers;
    if (route.credentials.kind === 'none') return done(methodOverrideRefusal(route, headers, null));
    const principal = request.principal!;
    const plan = opts.plans.planOf(principal.orgId, request.routeTable!);
    const refusal = routeRefusal(route, route.methods.get(request.method)!, principal, plan) ?? methodOverrideRefusal(route, headers, principal, plan);
    const outcome = refusal === undefined ? undefined : usageOutcomeOf(refusal);
    if (outcome !== undefined) noteUsage(principal, outcome);
    done(refusal);
  };
  // The catch-all never takes the gateway's own paths (/auth, /.well-known, /console and below,
  // where no route of a table may be): there the router answers as it always did, its 404, its
  // 405 with the methods of the gateway's own routes, and its 400 for an over-long parameter (a
  // wildcard would otherwise be the router's fall back for it). A constraint does that: it is
  // derived only on the framework's way, from the path (a few comparisons).
  app.addConstraintStrategy({
    name: FORWARDABLE,
    storage() {
      const handlers = new Map<string, unknown>();
      return { get: (value: string) => handlers.get(value) ?? null, set: (value: string, store: unknown) => void handlers.set(value, store) };
    },
    deriveConstraint: (request: IncomingMessage) => (RESERVED_PREFIXES.some((prefix) => isWithin(pathOf(request.url ?? ''), prefix)) ? 'no' : 'yes'),
    mustMatchWhenDerived: false,
  } as unknown as Parameters<FastifyInstance['addConstraintStrategy']>[0]);
  app.route({
    method: app.supportedMethods,
    url: '/*',
    constraints: { [FORWARDABLE]: 'yes' },
    config: { auth: 'route-table' },
    // The table's routes are documented instead (proxy/forwarded-docs.ts).
    schema: { hide: true },
    onRequest: [authenticateRoute, authorizeRoute],
    handler: forward,
  });
}

/** The catch-all's part in the public port's 404 and 405 (request/refusals.ts allowedMethods). */
export function createForwardedMethods(routes: RouteTableSource): ForwardedMethods {
  return { methodsOf: (path) => routes.current().match(path)?.methods };
}
