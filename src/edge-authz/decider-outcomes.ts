/**
 * How an edge decision ends (decider.ts): the allow and its identity headers, kept per credential
 * so the port renders it once; the refusal, as the public port renders its problems
 * (request/error-handler.ts); anything thrown on the way turned into one of those; and the record of
 * every decision (its metric, access line and span). Apart from the steps that reach it, so the
 * pipeline reads as the order of its checks. Made once per decider: no closure per decision.
 */
import { effectiveScopesHeader } from '../plans/effective-scopes.js';
import { problemBody, problemHeaders } from '../request/error-handler.js';
import { Problem, problems } from '../problems.js';
import { StoreUnavailable } from '../store/store.js';
import { usageOutcomeOf } from '../services/usage-recorder.js';
import type { EdgeAllow, EdgeDecision, EdgeDeny, EdgeHeaders } from './decision.js';
import type { DecisionContext, EdgeDeciderDeps } from './decider-context.js';
import { createKeptAllows } from './kept-allows.js';

/** The identity headers a decision sets, or tells the proxy to remove when it sets none. */
export const EDGE_IDENTITY_HEADERS = ['x-organization-id', 'x-organization-scopes', 'x-authgate-identity'] as const;

export type DecisionOutcomes = Readonly<{
  /** A refusal: the problem's status, headers (its RateLimit ones too) and body; `allow` for a 405. */
  deny(ctx: DecisionContext, problem: Problem, allow?: string): EdgeDeny;
  /** The allow, with the assertion for the route's upstream (null: none); kept per credential while nothing changed. */
  allow(ctx: DecisionContext, assertion: string | null): EdgeDecision;
  /** Anything thrown or rejected on the way: a problem as it is, the store's absence a 503, else a fault (500). */
  failure(ctx: DecisionContext, error: unknown): EdgeDecision;
  /** The decision's metric, access line and span; the decision itself is returned. */
  finish(ctx: DecisionContext, decision: EdgeDecision): EdgeDecision;
}>;

export function createDecisionOutcomes(deps: Pick<EdgeDeciderDeps, 'noteUsage' | 'plans' | 'cacheSeconds' | 'record' | 'onFault' | 'speedTricks'>): DecisionOutcomes {
  function deny(ctx: DecisionContext, problem: Problem, allow?: string): EdgeDeny {
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

  /** The last allow of each credential without a counted limit (kept-allows.ts: a speed trick, off by setting). */
  const keptAllows = createKeptAllows(deps.speedTricks.keptAllows);

  function allow(ctx: DecisionContext, assertion: string | null): EdgeDecision {
    const principal = ctx.principal;
    if (principal !== null) deps.noteUsage(principal, 'admitted');
    const keepable = principal !== null && ctx.rateHeaders === undefined;
    // The plan is looked up again on every decision: a moved organization's kept allow goes.
    const plan = principal === null ? undefined : deps.plans.planOf(principal.orgId, ctx.table!);
    if (keepable) {
      const kept = keptAllows.get(principal, ctx.table!, ctx.route!, plan, assertion);
      if (kept !== undefined) return kept;
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
    if (keepable) keptAllows.keep(principal, ctx.table!, ctx.route!, plan, assertion, decision);
    return decision;
  }

  function failure(ctx: DecisionContext, error: unknown): EdgeDecision {
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

  function finish(ctx: DecisionContext, decision: EdgeDecision): EdgeDecision {
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

  return { deny, allow, failure, finish };
}
