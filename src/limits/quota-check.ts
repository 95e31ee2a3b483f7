/**
 * The quota stage of forwarded routes (issue 47), after the rate limits, for the three ways a
 * request is decided (the framework's catch-all, the fast lane, the authorization port): the
 * organization's plan's quota (plans/organization-plans.ts), the route's `cost` spent through the
 * keeper (quota.ts), the RateLimit fields of the quota beside the rate limit's, and a 429 past it.
 * No plans, or a plan without a quota: nothing here runs beyond one lookup.
 */
import type { Principal } from '../credentials/principal.js';
import { Problem } from '../problems.js';
import type { CompiledPlan, CompiledRoute, RouteTable } from '../route-table/types.js';
import type { KeyQuota } from './key-quotas.js';
import type { QuotaKeeper, QuotaRule, QuotaVerdict } from './quota.js';

/** The quota's name in RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers). */
export const QUOTA_POLICY_NAME = 'quota';
/** An API key's own quota's name there, when it is the tighter (limits/key-quotas.ts). */
export const KEY_QUOTA_POLICY_NAME = 'key-quota';

const PERIOD_SECONDS = { day: 86_400, month: 2_592_000 } as const;

export type QuotaGate = Readonly<{
  /** The quota that applies to the principal's request under the table, or undefined (none: no change). */
  ruleOf(principal: Principal, table: RouteTable): QuotaRule | undefined;
  /** The same, for a plan already looked up (the fast lane's). */
  ruleOfPlan(plan: CompiledPlan | undefined): QuotaRule | undefined;
  /** Spends the route's cost: the verdict now while held, a promise otherwise (StoreUnavailable when it cannot ask). */
  spend(principal: Principal, rule: QuotaRule, route: CompiledRoute): QuotaVerdict | Promise<QuotaVerdict>;
  /** Whether spendHeld would admit now (nothing spent): the fast lane looks before the rate limit counts. */
  holds(principal: Principal, rule: QuotaRule, route: CompiledRoute): boolean;
  /** spend() only from what is held here (the fast lane); undefined, nothing spent, otherwise. */
  spendHeld(principal: Principal, rule: QuotaRule, route: CompiledRoute): QuotaVerdict | undefined;
  /** The 429 of a refused verdict, counted per plan. */
  refusal(verdict: QuotaVerdict): Problem;
}>;

export function createQuotaGate(deps: {
  keeper: QuotaKeeper;
  planOf: (orgId: string, table: RouteTable) => CompiledPlan | undefined;
  /** authgate_quota_refusals_total{plan}. */
  onRefused: (plan: string) => void;
  /** An API key's own quota (limits/key-quotas.ts), spent beside its organization's; none: only the organization's. */
  keyQuotaOf?: (keyId: string) => KeyQuota | undefined;
}): QuotaGate {
  const { keeper, planOf } = deps;
  const keyQuotaOf = deps.keyQuotaOf ?? (() => undefined);
  /** The key's own rule beside the organization's (its plan's name for the metric), or undefined. */
  const keyRuleOf = (principal: Principal, rule: QuotaRule): QuotaRule | undefined => {
    if (principal.via !== 'api_key') return undefined;
    const own = keyQuotaOf(principal.credentialId);
    return own === undefined ? undefined : { requests: own.requests, per: rule.per, plan: rule.plan, key: true };
  };
  /** One rule object per plan object: the keeper compares by value, the metrics by name. */
  const rules = new WeakMap<CompiledPlan, QuotaRule>();
  const ruleOfPlan = (plan: CompiledPlan | undefined): QuotaRule | undefined => {
    if (plan === undefined || plan.quota === undefined) return undefined;
    let rule = rules.get(plan);
    if (rule === undefined) rules.set(plan, (rule = Object.freeze({ requests: plan.quota.requests, per: plan.quota.per, plan: plan.name })));
    return rule;
  };
  return {
    ruleOf(principal, table) {
      return table.plans.size === 0 ? undefined : ruleOfPlan(planOf(principal.orgId, table));
    },
    ruleOfPlan,
    spend(principal, rule, route) {
      const keyRule = keyRuleOf(principal, rule);
      return keyRule === undefined ? keeper.spend(principal.orgId, rule, route.cost) : keeper.spendWithKey(principal.orgId, rule, principal.credentialId, keyRule, route.cost);
    },
    // A key with its own quota is counted in the store on each request: never from what is held alone.
    holds: (principal, rule, route) => keyRuleOf(principal, rule) === undefined && keeper.holds(principal.orgId, rule, route.cost),
    spendHeld: (principal, rule, route) => (keyRuleOf(principal, rule) === undefined ? keeper.spendHeld(principal.orgId, rule, route.cost) : undefined),
    refusal(verdict) {
      deps.onRefused(verdict.rule.plan);
      const { requests, per } = verdict.rule;
      if (verdict.rule.key === true) {
        return new Problem('quotaExceeded', `This API key's own quota allows ${requests} requests per ${per} (UTC); it is spent until the ${per} ends, in ${verdict.resetSeconds} s.`, 'key_quota_exceeded', verdict.resetSeconds);
      }
      return new Problem('quotaExceeded', `This organization's plan allows ${requests} requests per ${per} (UTC); the quota is spent until the ${per} ends, in ${verdict.resetSeconds} s.`, 'quota_exceeded', verdict.resetSeconds);
    },
  };
}

const policyNameOf = (rule: QuotaRule) => (rule.key === true ? KEY_QUOTA_POLICY_NAME : QUOTA_POLICY_NAME);

/** The quota's RateLimit-Policy member: its quota and its period's length (a month as 30 days). */
export function quotaPolicyMember(rule: QuotaRule): string {
  return `"${policyNameOf(rule)}";q=${rule.requests};w=${PERIOD_SECONDS[rule.per]}`;
}

/** The quota's RateLimit member: what is left and when the period ends. */
export function quotaMember(verdict: QuotaVerdict): string {
  return `"${policyNameOf(verdict.rule)}";r=${verdict.remaining};t=${verdict.resetSeconds}`;
}

/** Adds the quota's members to RateLimit-Policy and RateLimit (after the rate limit's, when set). */
export function withQuotaHeaders(headers: Record<string, string | undefined>, verdict: QuotaVerdict): void {
  const policy = headers['ratelimit-policy'];
  const current = headers['ratelimit'];
  headers['ratelimit-policy'] = policy === undefined ? quotaPolicyMember(verdict.rule) : `${policy}, ${quotaPolicyMember(verdict.rule)}`;
  headers['ratelimit'] = current === undefined ? quotaMember(verdict) : `${current}, ${quotaMember(verdict)}`;
}
