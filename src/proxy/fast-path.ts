/**
 * The forwarded routes' fast lane (issue 18): a forwarded request that meets no refusal goes from
 * node:http straight to its route's upstream through an undici Pool (proxy/fast-forward.ts sends it), without fastify's router, hooks,
 * request and reply objects and without @fastify/reply-from; a body streams from the client's
 * socket to the upstream's, and the answer back, each with backpressure. It runs the same
 * pipeline, by calling the same functions: the User-Agent rule, the path guard, the live route table
 * (read once per request, and matched once: route-table/path-reading.ts; a refused path is the framework's to answer), the bearer credential (none on a
 * public route) (resolved from the cache only), the scope, the rate limits (the credential's and the
 * route's: budget this replica holds only), the identity assertion (one kept only), the identity headers, the
 * upstream's answer headers, the problems of a failed upstream, the metrics and the access line.
 *
 * It takes a request only when it can answer it without refusing it and without waiting for
 * anything but the credential's one store read (a cache miss, or the cache off) and the upstream:
 * every other request (a method the route does not forward, a GET or HEAD with a body, an
 * Expect (whose 100 Continue request/admission.ts sends on the body's first read), an Origin, a Host
 * to refuse, a missing or unknown credential, a refusal of any kind, an assertion to
 * sign, rate-limit budget to lease, load shedding, shutdown) goes to fastify as before, having had
 * nothing done or counted here but that read, whose answer fastify then uses instead of reading
 * again (credentials/settled-resolution.ts). So every refusal and every slower path keeps one
 * implementation, and this one is the happy path only.
 */
import type { PlanLookup } from '../plans/organization-plans.js';
import { planAllows } from '../route-table/plans.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { methodOverrideRefusal } from '../authz/method-override.js';
import { takesCredential } from '../authz/authorize.js';
import { readBearer } from '../credentials/bearer.js';
import type { DecisionRecorder } from '../credentials/decisions.js';
import type { Principal } from '../credentials/principal.js';
import type { CredentialResolver, Resolution } from '../credentials/resolver.js';
import { keepSettledResolution } from '../credentials/settled-resolution.js';
import { hostProblem } from '../request/admission.js';
import type { RecordAnswer } from '../request/record-request.js';
import type { IdentityAsserter } from '../identity/assertion.js';
import type { RateLimiter } from '../limits/limiter.js';
import type { RateLimitPolicy } from '../limits/policy.js';
import { appliedRouteLimit, routeLimitKey } from '../limits/route-limit.js';
import type { Metrics } from '../observability/metrics.js';
import type { CompiledRoute, RouteTable, RouteTableSource } from '../route-table/types.js';
import type { Tracing } from '../tracing/tracing.js';
import type { QuotaGate } from '../limits/quota-check.js';
import type { UsageNote } from '../services/usage-recorder.js';
import { createLaneSender, type Lane } from './fast-forward.js';
import type { ForwardedInfo } from './identity-headers.js';
import { isAmbiguousPath } from '../request/path-guard.js';
import type { UpstreamPools } from './upstream-pools.js';

/** node:http's request handler: the lane's own answer, or fastify's (deps.framework). */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => void;

/** Longer paths go the framework's way (its router bounds what a wildcard may match). */
const MAX_PATH = 200;

export function createFastPath(deps: {
  /** The live route table (route-table/live.ts): read once per request. */
  routes: RouteTableSource;
  /** The upstreams' clients (proxy/upstream-pools.ts), shared with the framework's path. */
  pools: UpstreamPools;
  /** The routes' own rate limits' limiter (limits/route-limit.ts). */
  routeLimiter: RateLimiter;
  /** X-Forwarded-* for a request (proxy/forwarded-info.ts), as the framework's path sends them. */
  forwardedInfo: (request: IncomingMessage) => ForwardedInfo;
  environment: string;
  hsts: string | undefined;
  /** AUTHGATE_CORS_ORIGINS is set: every answer varies on Origin, the lane's too (request/cors.ts). */
  varyOrigin: boolean;
  resolver: CredentialResolver;
  recordDecision: DecisionRecorder;
  noteKeyUse: (principal: Principal) => void;
  /** Usage figures: the lane's requests are all admitted (services/usage-recorder.ts). */
  noteUsage: UsageNote;
  /** The plan's quota: spent from what this replica holds only (limits/quota-check.ts). */
  quota: QuotaGate;
  rateLimits: Readonly<{ policy: RateLimitPolicy; limiter: RateLimiter }>;
  /** The organizations' plans (plans/organization-plans.ts): a credential holds its scopes within its plan's. */
  plans: PlanLookup;
  identity: IdentityAsserter | undefined;
  metrics: Metrics;
  record: RecordAnswer;
  /** AUTHGATE_TRACING=on (tracing/tracing.ts); undefined: off. */
  tracing: Tracing | undefined;
  /** True from the moment the server starts closing: fastify answers 503 then. */
  closing: () => boolean;
  /** True while load shedding refuses: fastify answers 503 then. */
  overloaded: () => boolean;
  /** fastify's own request handler: every request the lane does not answer. */
  framework: (request: IncomingMessage, response: ServerResponse) => void;
}): FastPath {
  // What the lane binds once per route (its metric series), kept as long as the route is: a
  // table swapped in gets its lanes on its routes' first requests.
  const lanes = new WeakMap<CompiledRoute, Lane>();
  const laneOf = (table: RouteTable, route: CompiledRoute): Lane => {
    let lane = lanes.get(route);
    if (lane === undefined) {
      lane = { route, table, taken: deps.metrics.fastLaneRequests.bound({ route: route.label }) };
      lanes.set(route, lane);
    }
    return lane;
  };

  const { policy, limiter } = deps.rateLimits;
  const { routes, routeLimiter, framework } = deps;
  const send = createLaneSender(deps);

  function handle(request: IncomingMessage, response: ServerResponse): void {
    const method = request.method ?? '';
    const headers = request.headers;
    const userAgent = headers['user-agent'];
    if (userAgent === undefined || userAgent.trim() === '') return framework(request, response);
    if (headers.origin !== undefined || headers.expect !== undefined) return framework(request, response);
    // No Host (HTTP/1.1), two, or one that is no host: fastify's first hook refuses it (request/admission.ts).
    if (hostProblem(request) !== undefined) return framework(request, response);
    // A body streams to the upstream as it arrives (undici reads the request with backpressure);
    // node's parser has already refused a request with both a length and chunked, or a bad length.
    // Any transfer coding but plain chunked is the framework's to refuse (request/path-guard.ts): node has
    // removed the chunked framing only, and the coding's name would not reach the upstream.
    const length = headers['content-length'];
    const coding = headers['transfer-encoding'];
    if (coding !== undefined && coding !== 'chunked') return framework(request, response);
    const hasBody = coding !== undefined || (length !== undefined && length !== '0');
    if (hasBody && (method === 'GET' || method === 'HEAD')) return framework(request, response);
    const url = request.url ?? '';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path.length > MAX_PATH || path.includes('%') || isAmbiguousPath(url)) return framework(request, response);
    // The one read of the live table, and the one match: a reload meanwhile changes nothing here.
    const table = routes.current();
    const route = table.match(path);
    if (route === undefined || deps.closing() || deps.overloaded()) return framework(request, response);
    const rule = route.methods.get(method);
    if (rule === undefined) return framework(request, response); // a method the route does not forward: fastify's 405
    const lane = laneOf(table, route);

    if (rule === null) {
      // A public route: no credential is read; its own limit (per client address) goes the framework's
      // way, and so does a method override it refuses (authz/method-override.ts).
      if (route.rateLimit !== undefined || methodOverrideRefusal(route, headers, null) !== undefined) return framework(request, response);
      return send(request, response, { lane, method, url, hasBody, principal: null, assertion: null, verdict: undefined, startedAt: performance.now(), plan: undefined });
    }
    const bearer = readBearer(headers.authorization, request.rawHeaders);
    if (!bearer.ok) return framework(request, response);
    const resolved = deps.resolver.resolveCached(bearer.token, route.credentials);
    if (resolved !== undefined) {
      if (!forward(request, response, lane, method, url, hasBody, resolved, performance.now())) framework(request, response);
      return;
    }
    // A miss (or the cache off): the one store read (or signature check) the framework's path
    // would make, awaited here. Then the same lane; or, for any refusal or wait, the framework's
    // path with that answer (settled-resolution.ts), so the store is never asked twice.
    const startedAt = performance.now();
    const loading = loadResolution(bearer.token, route.credentials);
    loading.then(
      (resolution) => {
        // A client that went while the store answered has nobody left to answer: its request
        // goes nowhere (as one gone mid-answer takes its upstream request with it), and, like a
        // request whose client went on the framework's way, it has no access line.
        if (request.socket.destroyed || response.destroyed) return;
        // Admitted before any shutdown or load shedding that began meanwhile (checked above, as
        // the framework checks them once, on arrival): an in-flight request, served.
        if (!forward(request, response, lane, method, url, hasBody, resolution, startedAt)) handOver(request, response, loading);
      },
      () => handOver(request, response, loading),
    );
  }

  /** The resolver's answer as a promise, a synchronous throw (a bug) included. */
  function loadResolution(token: string, credentials: CompiledRoute['credentials']): Promise<Resolution> {
    try {
      return Promise.resolve(deps.resolver.resolve(token, credentials));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  function handOver(request: IncomingMessage, response: ServerResponse, resolution: Promise<Resolution>): void {
    keepSettledResolution(request, resolution);
    framework(request, response);
  }

  /**
   * Forwards the request for a resolved credential, when nothing refuses it or makes it wait (the
   * route's credential kinds, the scope, an assertion to sign, rate-limit budget to lease): true
   * when taken, having answered; false, having done nothing, for the framework to answer.
   */
  function forward(request: IncomingMessage, response: ServerResponse, lane: Lane, method: string, url: string, hasBody: boolean, resolved: Resolution, startedAt: number): boolean {
    if (!resolved.ok) return false;
    const principal = resolved.principal;
    const route = lane.route;
    const credentials = route.credentials;
    if (credentials.kind !== 'bearer' || !takesCredential(credentials, principal)) return false;
    const rule = route.methods.get(method)!;
    if (!principal.scopes.holds(rule)) return false;
    const plan = deps.plans.planOf(principal.orgId, lane.table);
    if (!planAllows(plan, rule)) return false;
    // A method-override header names a method whose scope must be held too: the framework refuses it.
    if (methodOverrideRefusal(route, request.headers, principal, plan) !== undefined) return false;
    let assertion: string | null = null;
    if (deps.identity !== undefined) {
      const kept = deps.identity.current(principal, route.upstream.audience);
      if (kept === undefined) return false;
      assertion = kept;
    }
    // The quota, from what this replica holds only: looked at before either rate limit counts (a
    // quota to lease goes the framework's way, which must not find the request counted already),
    // spent after they admit (synchronously: nothing runs between the look and the spending).
    const quotaRule = deps.quota.ruleOfPlan(plan);
    if (quotaRule !== undefined && !deps.quota.holds(principal, quotaRule, route)) return false;
    const limit = policy.limitFor(principal);
    // The route's own limit, with budget held here, on a credential without a limit of its own:
    // with two windows to count in, one could refuse after the other had counted, so the
    // framework's way takes those (as it takes a refusal, or a lease).
    if (route.rateLimit !== undefined) {
      if (limit !== undefined) return false;
      if (routeLimiter.takeHeld(routeLimitKey(route, principal, ''), appliedRouteLimit(route.rateLimit)) === undefined) return false;
    }
    const verdict = limit === undefined ? undefined : limiter.takeHeld(principal, limit);
    if (limit !== undefined && verdict === undefined) return false;
    const quota = quotaRule === undefined ? undefined : deps.quota.spendHeld(principal, quotaRule, route);
    send(request, response, { lane, method, url, hasBody, principal, assertion, verdict, quota, startedAt, plan });
    return true;
  }

  return handle;
}
