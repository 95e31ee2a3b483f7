/**
 * Quotas across replicas (issue 47): so many requests per organization per UTC calendar day or
 * month, spent only by admitted requests, a route's `cost` at a time.
 *
 * Each replica leases from the store's count of the period (QuotaStore.leaseQuota) and spends
 * here, so most requests cost no store round trip. The store never grants more than the period
 * has left, so the replicas together never admit more than the quota, however many there are and
 * however requests interleave. Leasing ahead strands units a replica holds unspent; to keep that
 * from refusing anybody at the boundary, slices are leased ahead only while the period has far
 * more left than every replica could hold (FAR_SLICES slices); nearer the end each request spends
 * its cost in the store itself (all or nothing), and a replica gives back what it held unspent
 * once its organization has been idle a few seconds. A store that does not answer refuses a
 * request that needs it (StoreUnavailable: 503), as every other check fails closed; held units
 * are spent meanwhile, since the store has counted them already.
 */
import type { QuotaGrant, QuotaStore } from '../store/quotas.js';

export type QuotaPeriod = 'day' | 'month';

/**
 * A quota as a plan declares it; `plan` names it in metrics and problems. `key` marks an API
 * key's own quota (limits/key-quotas.ts), counted beside its organization's.
 */
export type QuotaRule = Readonly<{ requests: number; per: QuotaPeriod; plan: string; key?: true }>;

export type QuotaVerdict = Readonly<{
  allowed: boolean;
  rule: QuotaRule;
  /** What the period has left as this replica knows it (RateLimit `r`). */
  remaining: number;
  /** Seconds until the period ends (RateLimit `t`; Retry-After when refused), at least 1. */
  resetSeconds: number;
}>;

/** A UTC calendar period: its name in the store, its bounds (epoch ms). */
export type Period = Readonly<{ name: string; startsAt: number; endsAt: number }>;

export function periodOf(at: number, per: QuotaPeriod): Period {
  const date = new Date(at);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  if (per === 'month') {
    return { name: `m${year}-${String(month + 1).padStart(2, '0')}`, startsAt: Date.UTC(year, month, 1), endsAt: Date.UTC(year, month + 1, 1) };
  }
  const day = date.getUTCDate();
  return { name: `d${date.toISOString().slice(0, 10)}`, startsAt: Date.UTC(year, month, day), endsAt: Date.UTC(year, month, day + 1) };
}

/** How much one lease ahead asks for: a hundredth of the quota, 1 to 1000. */
export function quotaSliceOf(requests: number): number {
  return Math.min(1000, Math.max(1, Math.ceil(requests / 100)));
}

/** Leases ahead only while the period has more than this many slices left. */
export const FAR_SLICES = 16;
/** A replica gives back what it holds of an organization idle this long. */
export const QUOTA_IDLE_RETURN_MS = 5000;

export type QuotaKeeper = Readonly<{
  /** Spends `cost` of the organization's period: at once while held, else through the store. */
  spend(orgId: string, rule: QuotaRule, cost: number): QuotaVerdict | Promise<QuotaVerdict>;
  /**
   * Spends `cost` of both the organization's period and the key's own count in it, all or nothing,
   * exactly in the store (a key's quota is never leased ahead): the verdict names the key's rule
   * when the key's count is the tighter.
   */
  spendWithKey(orgId: string, rule: QuotaRule, keyId: string, keyRule: QuotaRule, cost: number): Promise<QuotaVerdict>;
  /** Whether spendHeld would admit now; nothing is spent. */
  holds(orgId: string, rule: QuotaRule, cost: number): boolean;
  /** spend(), only when it can admit at once from what this replica holds; undefined (nothing spent) otherwise. */
  spendHeld(orgId: string, rule: QuotaRule, cost: number): QuotaVerdict | undefined;
  /** Gives back what is held of idle organizations now (the timer calls this). */
  returnIdle(): Promise<void>;
  /** Stops the timer and gives back everything held. */
  close(): Promise<void>;
}>;

/** What the store said of a lease, for metrics. */
export type QuotaLeaseOutcome = 'granted' | 'exhausted' | 'store_unavailable';

type Budget = {
  readonly period: Period;
  readonly limit: number;
  /** Leased and not spent. */
  held: number;
  /** What the store had left after the last grant; undefined before the first. */
  left: number | undefined;
  lastSpentAt: number;
  ahead: Promise<void> | undefined;
};

export function createQuotaKeeper(deps: {
  store: Pick<QuotaStore, 'leaseQuota' | 'returnQuota'>;
  now: () => number;
  onLease?: (outcome: QuotaLeaseOutcome) => void;
  idleReturnMs?: number;
}): QuotaKeeper {
  const { store, now } = deps;
  const onLease = deps.onLease ?? (() => {});
  const idleMs = deps.idleReturnMs ?? QUOTA_IDLE_RETURN_MS;
  const budgets = new Map<string, Budget>();

  function budgetOf(orgId: string, rule: QuotaRule, t: number): Budget {
    let budget = budgets.get(orgId);
    // A period that ended (or a clock set back before it), or another quota: what was held belonged to that one.
    if (budget === undefined || t >= budget.period.endsAt || t < budget.period.startsAt || budget.limit !== rule.requests) {
      if (budget !== undefined && budget.held > 0 && t < budget.period.endsAt) void giveBack(orgId, budget);
      budget = { period: periodOf(t, rule.per), limit: rule.requests, held: 0, left: undefined, lastSpentAt: t, ahead: undefined };
      budgets.set(orgId, budget);
    }
    return budget;
  }

  const verdict = (budget: Budget, rule: QuotaRule, allowed: boolean, t: number): QuotaVerdict => ({
    allowed,
    rule,
    remaining: Math.max(0, Math.min(rule.requests, (budget.left ?? rule.requests) + budget.held)),
    resetSeconds: Math.max(1, Math.ceil((budget.period.endsAt - t) / 1000)),
  });

  const far = (budget: Budget) => budget.left !== undefined && budget.left > quotaSliceOf(budget.limit) * FAR_SLICES;

  async function lease(orgId: string, budget: Budget, want: number, whole: boolean): Promise<QuotaGrant> {
    try {
      const grant = await store.leaseQuota({ orgId, period: budget.period.name, endsAt: budget.period.endsAt, counters: [{ keyId: null, limit: budget.limit }], want, whole });
      budget.left = grant.left;
      onLease(grant.granted > 0 ? 'granted' : 'exhausted');
      return grant;
    } catch (error) {
      onLease('store_unavailable');
      throw error;
    }
  }

  /** A slice ahead, in the background, while the period is far from its end. */
  function leaseAhead(orgId: string, budget: Budget): Promise<void> {
    return (budget.ahead ??= lease(orgId, budget, quotaSliceOf(budget.limit), false).then(
      (grant) => {
        budget.held += grant.granted;
        budget.ahead = undefined;
      },
      () => {
        budget.ahead = undefined;
      },
    ));
  }

  function spendHeld(orgId: string, rule: QuotaRule, cost: number): QuotaVerdict | undefined {
    const t = now();
    const budget = budgetOf(orgId, rule, t);
    if (budget.held < cost) return undefined;
    budget.held -= cost;
    budget.lastSpentAt = t;
    if (budget.held < quotaSliceOf(budget.limit) / 2 && far(budget) && budget.ahead === undefined) void leaseAhead(orgId, budget);
    return verdict(budget, rule, true, t);
  }

  async function spendSlow(orgId: string, rule: QuotaRule, cost: number): Promise<QuotaVerdict> {
    // Bounded: each turn either spends, or leases and finds the period nearer its end.
    for (let turn = 0; turn < 8; turn++) {
      const budget = budgetOf(orgId, rule, now());
      if (far(budget) && cost <= quotaSliceOf(budget.limit)) {
        await leaseAhead(orgId, budget);
        const spent = spendHeld(orgId, rule, cost);
        if (spent !== undefined) return spent;
        continue;
      }
      // Near the end (or the first lease, or a cost above a slice): this request's cost, exactly.
      const grant = await lease(orgId, budget, cost, true);
      const t = now();
      if (grant.granted === cost) budget.lastSpentAt = t;
      return verdict(budget, rule, grant.granted === cost, t);
    }
    const budget = budgetOf(orgId, rule, now());
    const grant = await lease(orgId, budget, cost, true);
    return verdict(budget, rule, grant.granted === cost, now());
  }

  async function spendWithKey(orgId: string, rule: QuotaRule, keyId: string, keyRule: QuotaRule, cost: number): Promise<QuotaVerdict> {
    const budget = budgetOf(orgId, rule, now());
    // The organization's share from what this replica holds when it can (the store counted it when
    // leased: only the key's count is asked), else from the store with the key's, in one step.
    const fromHeld = budget.held >= cost;
    if (fromHeld) budget.held -= cost;
    const keyCounter = { keyId, limit: keyRule.requests };
    let grant: QuotaGrant;
    try {
      grant = await store.leaseQuota({ orgId, period: budget.period.name, endsAt: budget.period.endsAt, counters: fromHeld ? [keyCounter] : [{ keyId: null, limit: budget.limit }, keyCounter], want: cost, whole: true });
    } catch (error) {
      if (fromHeld) budget.held += cost;
      onLease('store_unavailable');
      throw error;
    }
    onLease(grant.granted > 0 ? 'granted' : 'exhausted');
    const allowed = grant.granted === cost;
    if (fromHeld && !allowed) budget.held += cost;
    if (!fromHeld) budget.left = grant.left;
    const t = now();
    if (allowed) budget.lastSpentAt = t;
    const orgVerdict = verdict(budget, rule, allowed, t);
    const keyLeft = fromHeld ? grant.left : grant.leastLeft;
    // The key's when it is what refused (the organization had the cost) or what has less left.
    const keyBinds = allowed ? keyLeft < orgVerdict.remaining : fromHeld || grant.left >= cost;
    return keyBinds ? { ...orgVerdict, rule: keyRule, remaining: Math.min(keyRule.requests, keyLeft) } : orgVerdict;
  }

  async function giveBack(orgId: string, budget: Budget): Promise<void> {
    const held = budget.held;
    if (held <= 0) return;
    budget.held = 0;
    try {
      await store.returnQuota(orgId, budget.period.name, [null], held);
      if (budget.left !== undefined) budget.left += held;
    } catch {
      // Not given back: stranded until the period ends, never admitted twice.
    }
  }

  async function returnIdle(): Promise<void> {
    const t = now();
    const work: Promise<void>[] = [];
    for (const [orgId, budget] of budgets) {
      if (t >= budget.period.endsAt) budgets.delete(orgId);
      else if (t - budget.lastSpentAt >= idleMs && budget.ahead === undefined) {
        work.push(giveBack(orgId, budget));
        budgets.delete(orgId);
      }
    }
    await Promise.all(work);
  }

  const timer = setInterval(() => void returnIdle(), Math.max(1000, Math.floor(idleMs / 2)));
  timer.unref();

  return {
    spend: (orgId, rule, cost) => spendHeld(orgId, rule, cost) ?? spendSlow(orgId, rule, cost),
    spendWithKey,
    holds(orgId, rule, cost) {
      const budget = budgets.get(orgId);
      const t = now();
      return budget !== undefined && budget.held >= cost && budget.limit === rule.requests && t >= budget.period.startsAt && t < budget.period.endsAt;
    },
    spendHeld,
    returnIdle,
    async close() {
      clearInterval(timer);
      await Promise.all([...budgets].map(([orgId, budget]) => giveBack(orgId, budget)));
      budgets.clear();
    },
  };
}
