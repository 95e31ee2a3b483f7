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
 *
 * The steps are here, in that order; what a decision spends (step 6 and the plan's quota) is
 * decider-limits.ts, how it ends (the allow kept per credential, the refusal, the record of it)
 * decider-outcomes.ts, and what it is given and carries from step to step decider-context.ts.
 */
import { routeRefusal } from '../authz/authorize.js';
import { methodOverrideRefusal } from '../authz/method-override.js';
import type { ScopeRule } from '../authz/scopes.js';
import { bearerProblem, denialProblem } from '../credentials/authenticate.js';
import { readBearer } from '../credentials/bearer.js';
import { ALLOWED, type AuthDecision } from '../credentials/decisions.js';
import { looksLikeApiKey } from '../credentials/api-keys.js';
import type { Principal } from '../credentials/principal.js';
import type { Resolution } from '../credentials/resolver.js';
import { Problem } from '../problems.js';
import { isAmbiguousPath, isDoublyEncodedPath, pathOf } from '../proxy/path-guard.js';
import { pathRefusalProblem } from '../route-table/path-reading.js';
import type { CompiledRoute } from '../route-table/types.js';
import { StoreUnavailable } from '../store/store.js';
import type { EdgeDecider, EdgeDeny, EdgeRequest } from './decision.js';
import { then, type DecisionContext, type EdgeDeciderDeps, type Step } from './decider-context.js';
import { createDecisionLimits } from './decider-limits.js';
import { createDecisionOutcomes } from './decider-outcomes.js';
import { allowOf } from './route-allow.js';
import { usageOutcomeOf } from '../services/usage-recorder.js';

export type { EdgeDeciderDeps } from './decider-context.js';
export { EDGE_IDENTITY_HEADERS } from './decider-outcomes.js';

/** readBearer's raw header list for a single Authorization value: nothing to count. */
const NO_RAW: readonly string[] = [];

export function createEdgeDecider(deps: EdgeDeciderDeps): EdgeDecider {
  const { routes, resolver, recordDecision, identity } = deps;
  const { deny, allow, failure, finish } = createDecisionOutcomes(deps);
  // The quota's next step is the assertion (below; a function declaration, so there already).
  const { credentialLimit, routeLimit, quotaSpent } = createDecisionLimits(deps, asserted);

  function decideRoute(ctx: DecisionContext): Step {
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

  function overrideDenied(ctx: DecisionContext, problem: Problem): EdgeDeny {
    ctx.refusalReason = 'method_override';
    return deny(ctx, problem);
  }

  function decided(ctx: DecisionContext, decision: AuthDecision): void {
    ctx.auth = decision;
    recordDecision(decision.kind, decision.outcome, decision.reason);
  }

  /** The resolver's answer; the store's absence counted as the public port counts it, then thrown on. */
  function resolve(ctx: DecisionContext, token: string): Resolution | Promise<Resolution> {
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

  function credentialed(ctx: DecisionContext, route: CompiledRoute, rule: ScopeRule, resolution: Resolution): Step {
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

  /** The identity assertion for the route's upstream: the kept one, else signed now (proxy/forward.ts's rule). */
  function asserted(ctx: DecisionContext, route: CompiledRoute, principal: Principal): Step {
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
    const ctx: DecisionContext = { request, startedAt: performance.now(), table: undefined, route: undefined, principal: null, auth: undefined, rateHeaders: undefined, refusalReason: undefined };
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
