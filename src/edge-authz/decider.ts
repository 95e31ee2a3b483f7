/**
 * The one decision behind every edge protocol (issue 30): an EdgeRequest in, an EdgeDecision out,
 * made by the same functions as the gateway's own proxy, in the same order, so the authorization
 * port and the public port never disagree about a request:
 *
 * 0. a client's header only authgate sets (x-organization-*, x-authgate-*, an underscore name):
 *    400 before anything else, as no proxy can drop those names by prefix (issue 45);
 * 1. the path guard (proxy/path-guard.ts): an ambiguous target is 404 before anything else;
 * 2. the live route table, read once: no route is 404, a method the route does not list is 405
 *    with the route's Allow; then a doubly encoded path is 400 (the public port's order);
 * 3. a public route reads no credential: only its own limit, per client address;
 * 4. the bearer credential (credentials/bearer.ts: several Authorization values are refused as
 *    duplicate), resolved from the cache, else the store (StoreUnavailable: 503 + Retry-After,
 *    never a 401 and never an allow), counted in authgate_auth_decisions_total, an API key's use
 *    noted for lastUsedAt;
 * 5. the route's credential kinds and the method's scope (authz/authorize.ts routeRefusal), and
 *    those of each method a method-override header names (authz/method-override.ts);
 * 6. the credential's rate limit, then the route's, on the public port's own limiter instances
 *    (budget shared with it, and across replicas through the store);
 * 7. the identity assertion for the route's upstream (kept, or signed now).
 *
 * Refusals are the public port's problems, rendered as it renders them (http/error-handler.ts).
 * Synchronous on a warm cache with budget held and an assertion kept; a promise otherwise.
 */
import type { PlanLookup } from '../plans/organization-plans.js';
import { effectiveScopesHeader } from '../plans/effective-scopes.js';
import { routeRefusal } from '../authz/authorize.js';
import { methodOverrideRefusal } from '../authz/method-override.js';
import type { ScopeRule } from '../authz/scopes.js';
import { bearerProblem, denialProblem } from '../credentials/authenticate.js';
import { readBearer } from '../credentials/bearer.js';
import { ALLOWED, type AuthDecision, type DecisionRecorder } from '../credentials/decisions.js';
import { looksLikeApiKey } from '../credentials/api-keys.js';
import type { Principal } from '../credentials/principal.js';
import type { CredentialResolver, Resolution } from '../credentials/resolver.js';
import { problemBody, problemHeaders } from '../request/error-handler.js';
import type { IdentityAsserter } from '../identity/assertion.js';
import { rateLimitHeader } from '../limits/enforce.js';
import type { RateLimiter, RateVerdict } from '../limits/limiter.js';
import type { RateLimitPolicy } from '../limits/policy.js';
import { appliedRouteLimit, routeLimitKey } from '../limits/route-limit.js';
import { Problem, problems } from '../problems.js';
import { isAmbiguousPath, isDoublyEncodedPath, pathOf } from '../request/path-guard.js';
import { pathRefusalProblem } from '../route-table/path-reading.js';
import type { CompiledPlan, CompiledRoute, RouteTable, RouteTableSource } from '../route-table/types.js';
import { StoreUnavailable } from '../store/store.js';
import type { EdgeAllow, EdgeDecider, EdgeDecision, EdgeDeny, EdgeHeaders, EdgeRequest } from './decision.js';
import type { EdgeRecorder } from './record.js';
import { allowOf } from './route-allow.js';
import { withQuotaHeaders, type QuotaGate } from '../limits/quota-check.js';
import type { QuotaVerdict } from '../limits/quota.js';
import { usageOutcomeOf, type UsageNote } from '../services/usage-recorder.js';

/** The identity headers a decision sets, or tells the proxy to remove when it sets none. */
export const EDGE_IDENTITY_HEADERS = ['x-organization-id', 'x-organization-scopes', 'x-authgate-identity'] as const;

export type EdgeDeciderDeps = Readonly<{
  /** The live route table (route-table/live.ts): read once per decision. */
  routes: RouteTableSource;
  resolver: CredentialResolver;
  /** authgate_auth_decisions_total (observability/instrumentation.ts). */
  recordDecision: DecisionRecorder;
  /** lastUsedAt of an allowed API key (services/key-usage.ts). */
  noteKeyUse: (principal: Principal) => void;
  /** The credential's limit and the public port's limiter: one budget for both ports. */
  rateLimits: Readonly<{ policy: RateLimitPolicy; limiter: RateLimiter }>;
  /** The routes' own limits' limiter, the public port's (limits/route-limit.ts). */
  routeLimiter: RateLimiter;
  /** The organizations' plans (plans/organization-plans.ts): a credential holds its scopes within its plan's. */
  plans: PlanLookup;
  /** authgate_rate_limit_refusals_total, as the public port counts its 429s. */
  onRateLimited: () => void;
  /** The plan's quota (limits/quota-check.ts), the public port's keeper: one count for both ports. */
  quota: QuotaGate;
  /** Usage figures (services/usage-recorder.ts): each credentialed decision's outcome. */
  noteUsage: UsageNote;
  /** Signs x-authgate-identity; undefined when AUTHGATE_IDENTITY_ASSERTION=off. */
  identity: IdentityAsserter | undefined;
  /** AUTHGATE_AUTHZ_CACHE_SECONDS: how long a proxy may keep an allow (0: no-store). */
  cacheSeconds: number;
  /** The metric and access line of each decision (record.ts). */
  record: EdgeRecorder;
  /** A fault that is no refusal (answered 500): logged once, with nothing the client sent. */
  onFault: (error: unknown) => void;
}>;

/** What one decision has learnt so far: for its refusal's headers, its metric and its access line. */
type Context = {
  readonly request: EdgeRequest;
  readonly startedAt: number;
  table: RouteTable | undefined;
  route: CompiledRoute | undefined;
  principal: Principal | null;
  auth: AuthDecision | undefined;
  /** ratelimit-policy and ratelimit, once a limit counted this request. */
  rateHeaders: Record<string, string> | undefined;
  /** A refusal's reason for the access line when no credential check made one (identity_header, method_override). */
  refusalReason: string | undefined;
};

type Step = EdgeDecision | Promise<EdgeDecision>;

/** readBearer's raw header list for a single Authorization value: nothing to count. */
const NO_RAW: readonly string[] = [];

/** `f(value)` now when the value is there, after it when it is a promise: no extra turn on a warm path. */
function then<T>(value: T | Promise<T>, f: (resolved: T) => Step): Step {
  return value instanceof Promise ? value.then(f) : f(value);
}

export function createEdgeDecider(deps: EdgeDeciderDeps): EdgeDecider {
  const { routes, resolver, recordDecision, rateLimits, routeLimiter, identity } = deps;

  function deny(ctx: Context, problem: Problem, allow?: string): EdgeDeny {
    const headers: Record<string, string> = { ...problemHeaders(problem), ...ctx.rateHeaders };
    if (allow !== undefined) headers['allow'] = allow;
    return {
      allowed: false,
      status: problems[problem.problem].status,
      headers,
      body: JSON.stringify(problemBody(problem.problem, problem.detail)),
      route: ctx.route?.label,
    };
  }

  /**
   * The last allow of each credential without a counted limit: the same object while the route
   * table, the route and the kept assertion are the same, so the port renders it once and writes
   * its kept header block again (fast-front.ts). Keyed weakly by the cached principal: a credential
   * dropped from the cache takes its allow with it.
   */
  const keptAllows = new WeakMap<Principal, { table: RouteTable; route: CompiledRoute; plan: CompiledPlan | undefined; assertion: string | null; decision: EdgeAllow }>();

  function allow(ctx: Context, assertion: string | null): EdgeDecision {
    const principal = ctx.principal;
    if (principal !== null) deps.noteUsage(principal, 'admitted');
    const keepable = principal !== null && ctx.rateHeaders === undefined;
    // The plan is looked up again on every decision: a moved organization's kept allow goes.
    const plan = principal === null ? undefined : deps.plans.planOf(principal.orgId, ctx.table!);
    if (keepable) {
      const kept = keptAllows.get(principal);
      if (kept !== undefined && kept.assertion === assertion && kept.route === ctx.route && kept.table === ctx.table && kept.plan === plan) return kept.decision;
    }
    const set: Record<string, string> = {};
    if (principal !== null) {
      set['x-organization-id'] = principal.orgId;
      set['x-organization-scopes'] = effectiveScopesHeader(principal.scopes, ctx.table!.scopes, plan);
    }
    if (assertion !== null) set['x-authgate-identity'] = assertion;
    if (ctx.rateHeaders !== undefined) Object.assign(set, ctx.rateHeaders);
    const upstreamHeaders: EdgeHeaders = set;
    const decision: EdgeAllow = {
      allowed: true,
      upstreamHeaders,
      removeHeaders: EDGE_IDENTITY_HEADERS.filter((name) => set[name] === undefined),
      // A limited request's allow is never kept, under the credential's limit or the route's own:
      // each request must be counted, and its RateLimit would go stale.
      cacheSeconds: ctx.rateHeaders === undefined && ctx.route!.rateLimit === undefined ? deps.cacheSeconds : 0,
      route: ctx.route!.label,
    };
    if (keepable) keptAllows.set(principal, { table: ctx.table!, route: ctx.route!, plan, assertion, decision });
    return decision;
  }

  /** Anything thrown or rejected on the way: a problem as it is, the store's absence a 503, else a fault (500). */
  function failure(ctx: Context, error: unknown): EdgeDecision {
    if (error instanceof Problem) {
      // A limit's or the quota's refusal of a known credential: the organization's usage.
      const outcome = ctx.principal === null ? undefined : usageOutcomeOf(error);
      if (outcome !== undefined) deps.noteUsage(ctx.principal!, outcome);
      return deny(ctx, error);
    }
    if (error instanceof StoreUnavailable) return deny(ctx, new Problem('storeUnavailable', 'The credential store did not answer; try again shortly.', 'store_unavailable'));
    deps.onFault(error);
    return deny(ctx, new Problem('internalError'));
  }

  function finish(ctx: Context, decision: EdgeDecision): EdgeDecision {
    const request = ctx.request;
    deps.record({
      protocol: request.protocol,
      method: request.method,
      route: ctx.route?.label,
      status: decision.allowed ? 200 : decision.status,
      startedAt: ctx.startedAt,
      requestId: request.requestId,
      principal: ctx.principal,
      authDecision: ctx.auth,
      refusalReason: ctx.refusalReason,
      trace: request.trace,
    });
    request.endSpan?.({
      route: ctx.route?.label ?? 'unmatched',
      status: decision.allowed ? 200 : decision.status,
      credentialKind: ctx.principal?.via ?? ctx.auth?.kind,
      reason: ctx.auth?.reason,
      orgId: ctx.principal?.orgId,
    });
    return decision;
  }

  function decideRoute(ctx: Context): Step {
    const { target, method } = ctx.request;
    if (ctx.request.identityHeaderSent) {
      ctx.refusalReason = 'identity_header';
      return deny(ctx, new Problem('identityHeaderSent', 'The request carries a header only authgate sets (x-organization-*, x-authgate-*, or a name with an underscore).', 'identity_header'));
    }
    if (isAmbiguousPath(target)) return deny(ctx, new Problem('notFound', 'No such route.', 'ambiguous_path'));
    const path = pathOf(target);
    const table = routes.current();
    const reading = table.read(path); // as the public port reads it (route-table/path-reading.ts)
    if (reading.refusal !== undefined) return deny(ctx, pathRefusalProblem(reading.refusal));
    const route = reading.route;
    if (route === undefined) return deny(ctx, new Problem('notFound', 'No such route.'));
    ctx.table = table;
    ctx.route = route;
    const rule = route.methods.get(method);
    if (rule === undefined) return deny(ctx, new Problem('methodNotAllowed', 'This path does not take this method; see Allow.', 'method_not_allowed'), allowOf(route));
    if (isDoublyEncodedPath(path)) return deny(ctx, new Problem('badRequest', 'The path still holds a percent-encoded dot segment, slash or backslash once decoded.', 'double_encoded_path'));
    if (rule === null) {
      const overridden = methodOverrideRefusal(route, ctx.request.clientHeaders, null);
      if (overridden !== undefined) return overrideDenied(ctx, overridden);
      return then(routeLimit(ctx, route), () => allow(ctx, null));
    }

    const authorization = ctx.request.authorization;
    // readBearer counts Authorization in node's raw header list: the same pairs, from the proxy's values.
    const raw = authorization.length > 1 ? authorization.flatMap((value) => ['authorization', value]) : NO_RAW;
    const bearer = readBearer(authorization[0], raw);
    if (!bearer.ok) {
      decided(ctx, { kind: 'none', outcome: 'denied', reason: bearer.reason });
      return deny(ctx, bearerProblem(bearer.reason));
    }
    // A cache hit resolves now: no closure is made for it.
    const resolution = resolve(ctx, bearer.token);
    return resolution instanceof Promise ? resolution.then((resolved) => credentialed(ctx, route, rule, resolved)) : credentialed(ctx, route, rule, resolution);
  }

  function overrideDenied(ctx: Context, problem: Problem): EdgeDeny {
    ctx.refusalReason = 'method_override';
    return deny(ctx, problem);
  }

  function decided(ctx: Context, decision: AuthDecision): void {
    ctx.auth = decision;
    recordDecision(decision.kind, decision.outcome, decision.reason);
  }

  /** The resolver's answer; the store's absence counted as the public port counts it, then thrown on. */
  function resolve(ctx: Context, token: string): Resolution | Promise<Resolution> {
    const unavailable = (error: unknown): never => {
      if (error instanceof StoreUnavailable) decided(ctx, { kind: looksLikeApiKey(token) ? 'api_key' : 'jwt', outcome: 'error', reason: 'store_unavailable' });
      throw error;
    };
    try {
      const resolved = resolver.resolve(token);
      return resolved instanceof Promise ? resolved.catch(unavailable) : resolved;
    } catch (error) {
      return unavailable(error);
    }
  }

  function credentialed(ctx: Context, route: CompiledRoute, rule: ScopeRule, resolution: Resolution): Step {
    if (!resolution.ok) {
      decided(ctx, { kind: resolution.kind, outcome: 'denied', reason: resolution.reason });
      return deny(ctx, denialProblem(resolution));
    }
    const principal = resolution.principal;
    ctx.principal = principal;
    decided(ctx, ALLOWED[principal.via]);
    if (principal.via === 'api_key') deps.noteKeyUse(principal);
    const plan = deps.plans.planOf(principal.orgId, ctx.table!);
    const refusal = routeRefusal(route, rule, principal, plan);
    const overridden = refusal === undefined ? methodOverrideRefusal(route, ctx.request.clientHeaders, principal, plan) : undefined;
    const refused = refusal ?? overridden;
    if (refused !== undefined) {
      const outcome = usageOutcomeOf(refused);
      if (outcome !== undefined) deps.noteUsage(principal, outcome);
      return refusal !== undefined ? deny(ctx, refusal) : overrideDenied(ctx, refused);
    }
    // Most decisions have neither limit to wait for: no closure is made for them.
    const credentialLimited = credentialLimit(ctx, principal);
    if (credentialLimited === undefined) {
      const routeLimited = routeLimit(ctx, route);
      return routeLimited === undefined ? quotaSpent(ctx, route, principal) : routeLimited.then(() => quotaSpent(ctx, route, principal));
    }
    return credentialLimited.then(() => then(routeLimit(ctx, route), () => quotaSpent(ctx, route, principal)));
  }

  /** The plan's quota, once both limits admitted (the public port's order): its RateLimit members, or a 429. */
  function quotaSpent(ctx: Context, route: CompiledRoute, principal: Principal): Step {
    const rule = deps.quota.ruleOf(principal, ctx.table!);
    if (rule === undefined) return asserted(ctx, route, principal);
    const settle = (verdict: QuotaVerdict): Step => {
      const headers: Record<string, string | undefined> = { ...ctx.rateHeaders };
      withQuotaHeaders(headers, verdict);
      ctx.rateHeaders = headers as Record<string, string>;
      if (!verdict.allowed) throw deps.quota.refusal(verdict);
      return asserted(ctx, route, principal);
    };
    const verdict = deps.quota.spend(principal, rule, route);
    return verdict instanceof Promise ? verdict.then(settle) : settle(verdict);
  }

  /** The credential's own limit (limits/enforce.ts's rule): its RateLimit headers, or a 429. */
  function credentialLimit(ctx: Context, principal: Principal): undefined | Promise<undefined> {
    const limit = rateLimits.policy.limitFor(principal);
    if (limit === undefined) return undefined;
    const settle = (verdict: RateVerdict): undefined => {
      ctx.rateHeaders = { 'ratelimit-policy': verdict.limit.policyHeader, ratelimit: rateLimitHeader(verdict) };
      if (verdict.allowed) return undefined;
      deps.onRateLimited();
      const { count, windowSeconds } = verdict.limit;
      throw new Problem('rateLimited', `This credential may make ${count} requests per ${windowSeconds} s; try again in ${verdict.resetSeconds} s.`, 'rate_limited', verdict.resetSeconds);
    };
    const verdict = rateLimits.limiter.take(principal, limit);
    return verdict instanceof Promise ? verdict.then(settle) : settle(verdict);
  }

  /** The route's own limit (limits/route-limit.ts's rule): per credential, or per client address on a public route. */
  function routeLimit(ctx: Context, route: CompiledRoute): undefined | Promise<undefined> {
    if (route.rateLimit === undefined) return undefined;
    const settle = (verdict: RateVerdict): undefined => {
      if (verdict.allowed) return undefined;
      deps.onRateLimited();
      const { count, windowSeconds } = verdict.limit;
      const who = route.credentials.kind === 'none' ? 'client address' : 'credential';
      throw new Problem('rateLimited', `This route allows ${count} requests per ${windowSeconds} s per ${who}; try again in ${verdict.resetSeconds} s.`, 'rate_limited', verdict.resetSeconds);
    };
    const verdict = routeLimiter.take(routeLimitKey(route, ctx.principal, ctx.request.clientAddress), appliedRouteLimit(route.rateLimit));
    return verdict instanceof Promise ? verdict.then(settle) : settle(verdict);
  }

  /** The identity assertion for the route's upstream: the kept one, else signed now (proxy/forward.ts's rule). */
  function asserted(ctx: Context, route: CompiledRoute, principal: Principal): Step {
    if (identity === undefined) return allow(ctx, null);
    const audience = route.upstream.audience;
    const kept = identity.current(principal, audience);
    if (kept !== undefined) return allow(ctx, kept);
    return identity.sign(principal, audience).then((signed) => {
      // The organization went between the credential check and now: its credentials are revoked.
      if (signed === undefined) throw new Problem('credentialInvalid', undefined, 'revoked_token');
      return allow(ctx, signed);
    });
  }

  return function decideEdge(request: EdgeRequest): Step {
    const ctx: Context = { request, startedAt: performance.now(), table: undefined, route: undefined, principal: null, auth: undefined, rateHeaders: undefined, refusalReason: undefined };
    let step: Step;
    try {
      step = decideRoute(ctx);
    } catch (error) {
      return finish(ctx, failure(ctx, error));
    }
    if (step instanceof Promise) return step.then((decision) => finish(ctx, decision), (error: unknown) => finish(ctx, failure(ctx, error)));
    return finish(ctx, step);
  };
}
