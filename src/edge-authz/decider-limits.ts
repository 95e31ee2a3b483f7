/**
 * What an edge decision spends (decider.ts, step 6): the credential's rate limit, the route's own,
 * then the plan's quota, on the public port's own limiter and quota instances, so a budget is one
 * whichever port a request is decided on (and across replicas through the store). Each sets the
 * decision's RateLimit headers or throws the public port's 429. Apart from the pipeline so its
 * order reads in decider.ts; made once per decider, the functions as they were there.
 */
import type { Principal } from '../credentials/principal.js';
import { rateLimitHeader } from '../limits/enforce.js';
import type { RateVerdict } from '../limits/limiter.js';
import { withQuotaHeaders } from '../limits/quota-check.js';
import type { QuotaVerdict } from '../limits/quota.js';
import { appliedRouteLimit, routeLimitKey } from '../limits/route-limit.js';
import { Problem } from '../problems.js';
import type { CompiledRoute } from '../route-table/types.js';
import type { DecisionContext, EdgeDeciderDeps, Step } from './decider-context.js';

export type DecisionLimits = Readonly<{
  /** The credential's own limit (limits/enforce.ts's rule): its RateLimit headers, or a 429. */
  credentialLimit(ctx: DecisionContext, principal: Principal): undefined | Promise<undefined>;
  /** The route's own limit (limits/route-limit.ts's rule): per credential, or per client address on a public route. */
  routeLimit(ctx: DecisionContext, route: CompiledRoute): undefined | Promise<undefined>;
  /** The plan's quota, once both limits admitted (the public port's order): its RateLimit members, or a 429; then `next`. */
  quotaSpent(ctx: DecisionContext, route: CompiledRoute, principal: Principal): Step;
}>;

/** `next`: the step after the quota (decider.ts's identity assertion). */
export function createDecisionLimits(
  deps: Pick<EdgeDeciderDeps, 'rateLimits' | 'routeLimiter' | 'onRateLimited' | 'quota'>,
  next: (ctx: DecisionContext, route: CompiledRoute, principal: Principal) => Step,
): DecisionLimits {
  const { rateLimits, routeLimiter } = deps;

  function quotaSpent(ctx: DecisionContext, route: CompiledRoute, principal: Principal): Step {
    const rule = deps.quota.ruleOf(principal, ctx.table!);
    if (rule === undefined) return next(ctx, route, principal);
    const settle = (verdict: QuotaVerdict): Step => {
      const headers: Record<string, string | undefined> = { ...ctx.rateHeaders };
      withQuotaHeaders(headers, verdict);
      ctx.rateHeaders = headers as Record<string, string>;
      if (!verdict.allowed) throw deps.quota.refusal(verdict);
      return next(ctx, route, principal);
    };
    const verdict = deps.quota.spend(principal, rule, route);
    return verdict instanceof Promise ? verdict.then(settle) : settle(verdict);
  }

  function credentialLimit(ctx: DecisionContext, principal: Principal): undefined | Promise<undefined> {
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

  function routeLimit(ctx: DecisionContext, route: CompiledRoute): undefined | Promise<undefined> {
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

  return { credentialLimit, routeLimit, quotaSpent };
}
