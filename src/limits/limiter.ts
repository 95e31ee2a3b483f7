/**
 * Rate limits across replicas without a store round trip per request.
 *
 * Each replica leases budget per credential from the store (RateLimitStore.leaseRateBudget): a
 * slice of the window's allowance, counted in the store when granted, then spent here one request
 * at a time. A replica asks for the next slice in the background once its budget runs low, so
 * requests wait on the store only at a credential's first request of a window (or when a burst
 * outruns the refill). The store never grants more than the window has left, and grants at most
 * a quarter of what is left, so:
 *
 * - While the store answers, the replicas together admit at most `count` per window, however many
 *   there are. What they lose is the other way: budget leased by one replica and not spent is not
 *   available to another until the window ends; the quarter rule keeps that small as the window
 *   fills (each replica holds at most a slice, and at most a quarter of what was left).
 * - A window opens at the credential's first lease and lasts `window`; it is not sliding, so two
 *   windows back to back can admit up to 2 × count within one window's length.
 * - When the store cannot be reached, a replica falls back to its local share for the window:
 *   ceil(count / R), R the most replicas it has seen draw on one window, less what it already
 *   admitted in the window; it asks the store again when that window ends. With N replicas, the
 *   cluster then admits at most N × ceil(count / R) per window (≈ count while R = N). The
 *   credential check itself still fails closed (only cached credentials are served then).
 *
 * docs/operations.md ("Rate limits") states the same bounds for operators; test/e2e/rate-limits
 * measures them with two replicas.
 */
import type { Principal } from '../credentials/principal.js';
import type { RateGrant, RateLimitStore } from '../store/rate-limits.js';
import type { AppliedLimit } from './policy.js';

export type RateVerdict = Readonly<{
  allowed: boolean;
  limit: AppliedLimit;
  /** What the window has left, as this replica knows it (RateLimit `r`). */
  remaining: number;
  /** Seconds until the window ends (RateLimit `t`; Retry-After when refused), at least 1. */
  resetSeconds: number;
}>;

/** What the gateway wants to hear about the store's part (metrics). */
export type LeaseOutcome = 'granted' | 'exhausted' | 'store_unavailable';

/** Whose window a request counts in: a credential (its Principal), or a route's key (route-limit.ts). */
export type RateHolder = Readonly<Pick<Principal, 'credentialId' | 'orgId'>>;

export type RateLimiter = Readonly<{
  /** Counts one request of the credential under `limit`: answered at once while budget is held. */
  take(principal: RateHolder, limit: AppliedLimit): RateVerdict | Promise<RateVerdict>;
  /**
   * take(), only when it can answer at once with an admission: this replica holds budget for the
   * credential's current window. undefined (and nothing spent) otherwise: the caller then goes the
   * way that may wait for the store, or refuse.
   */
  takeHeld(principal: RateHolder, limit: AppliedLimit): RateVerdict | undefined;
  /** Budgets held (one per credential with a live window): for tests and diagnostics. */
  size(): number;
  close(): void;
}>;

/** How much one lease asks for: a tenth of the limit, 1 to 1000. */
export function sliceOf(count: number): number {
  return Math.min(1000, Math.max(1, Math.ceil(count / 10)));
}

type Budget = {
  readonly orgId: string;
  readonly limit: AppliedLimit;
  /** Leased (or, in fallback, the local share) and not spent yet. */
  remaining: number;
  /** Admitted here in the current window. */
  spent: number;
  /** When the window ends, by this replica's clock; 0 before the first lease. */
  resetAt: number;
  /** Granted in the window to all replicas, as of the last lease. */
  used: number;
  /** The store granted nothing more: refuse until resetAt. */
  exhausted: boolean;
  /** The store could not be reached: spending the local share until resetAt. */
  local: boolean;
  /** Replicas seen drawing on this credential's window. */
  replicas: number;
  pending: Promise<void> | undefined;
};

export function createRateLimiter(deps: {
  store: Pick<RateLimitStore, 'leaseRateBudget'>;
  /** This replica's id in the store's count of replicas. */
  replica: string;
  now: () => number;
  onLease?: (outcome: LeaseOutcome) => void;
  /** How often budgets of ended windows are dropped; 60 s by default. */
  sweepIntervalMs?: number;
}): RateLimiter {
  const { store, replica, now } = deps;
  const onLease = deps.onLease ?? (() => {});
  const budgets = new Map<string, Budget>();
  /** The most replicas any lease reported lately: the fallback's divisor for a credential never leased here. */
  let replicasSeen = 1;

  function verdict(budget: Budget, allowed: boolean, t: number): RateVerdict {
    const count = budget.limit.count;
    // Granted to all minus what this replica holds unspent: what the window has admitted at most.
    const left = budget.local ? budget.remaining : count - budget.used + budget.remaining;
    return {
      allowed,
      limit: budget.limit,
      remaining: Math.max(0, Math.min(count, left)),
      resetSeconds: Math.max(1, Math.ceil((budget.resetAt - t) / 1000)),
    };
  }

  function adoptGrant(budget: Budget, grant: RateGrant, t: number): void {
    const resetAt = t + grant.resetInMs;
    // A window that opened since the last lease: what was held belonged to the one that ended.
    if (budget.resetAt === 0 || resetAt - budget.resetAt > budget.limit.windowMs / 2) {
      budget.remaining = 0;
      budget.spent = 0;
    }
    budget.resetAt = resetAt;
    budget.remaining += grant.granted;
    budget.used = grant.used;
    budget.replicas = grant.replicas;
    budget.exhausted = grant.granted === 0;
    if (grant.replicas > replicasSeen) replicasSeen = grant.replicas;
    onLease(budget.exhausted ? 'exhausted' : 'granted');
  }

  function fallBack(budget: Budget, t: number): void {
    if (budget.resetAt <= t) {
      budget.resetAt = t + budget.limit.windowMs;
      budget.spent = 0;
    }
    const share = Math.ceil(budget.limit.count / Math.max(budget.replicas, replicasSeen, 1));
    budget.local = true;
    budget.remaining = Math.max(0, share - budget.spent);
    budget.exhausted = budget.remaining === 0;
    onLease('store_unavailable');
  }

  function refill(credentialId: string, budget: Budget): Promise<void> {
    const lease = { credentialId, orgId: budget.orgId, limit: budget.limit.count, windowMs: budget.limit.windowMs, want: sliceOf(budget.limit.count), replica };
    return store.leaseRateBudget(lease).then(
      (grant) => {
        budget.pending = undefined;
        adoptGrant(budget, grant, now());
      },
      () => {
        budget.pending = undefined;
        fallBack(budget, now());
      },
    );
  }

  function take(principal: RateHolder, limit: AppliedLimit): RateVerdict | Promise<RateVerdict> {
    const id = principal.credentialId;
    let budget = budgets.get(id);
    if (budget === undefined || budget.limit !== limit) {
      // A new credential here, or its limit changed: a budget under the new limit (the store's
      // count of the window goes on, or restarts if the window's length changed).
      budget = { orgId: principal.orgId, limit, remaining: 0, spent: 0, resetAt: 0, used: 0, exhausted: false, local: false, replicas: 0, pending: undefined };
      budgets.set(id, budget);
    }
    const t = now();
    if (budget.resetAt !== 0 && t >= budget.resetAt) {
      // The window ended: what was held is void, and the store is asked again (also after a fallback).
      budget.remaining = 0;
      budget.spent = 0;
      budget.exhausted = false;
      budget.local = false;
    }
    if (budget.remaining > 0) {
      budget.remaining--;
      budget.spent++;
      // Low: the next slice is asked for now, so that it is here before this one is spent.
      if (!budget.local && budget.pending === undefined && budget.remaining * 2 < sliceOf(limit.count)) {
        budget.pending = refill(id, budget);
      }
      return verdict(budget, true, t);
    }
    if (budget.exhausted) return verdict(budget, false, t);
    const held = budget;
    return (held.pending ??= refill(id, held)).then(() => {
      const now2 = now();
      if (held.remaining > 0) {
        held.remaining--;
        held.spent++;
        return verdict(held, true, now2);
      }
      // Spent by the requests that waited with this one, or nothing granted: refused, or one more lease.
      return held.exhausted ? verdict(held, false, now2) : take(principal, limit);
    });
  }

  function takeHeld(principal: RateHolder, limit: AppliedLimit): RateVerdict | undefined {
    const budget = budgets.get(principal.credentialId);
    if (budget === undefined || budget.limit !== limit || budget.remaining <= 0) return undefined;
    const t = now();
    if (budget.resetAt !== 0 && t >= budget.resetAt) return undefined; // the window ended: take() starts the next
    const verdict = take(principal, limit);
    return verdict instanceof Promise ? undefined : verdict; // held budget: take() answers at once
  }

  const sweep = setInterval(() => {
    const t = now();
    for (const [id, budget] of budgets) if (budget.pending === undefined && budget.resetAt !== 0 && budget.resetAt <= t) budgets.delete(id);
  }, deps.sweepIntervalMs ?? 60_000);
  sweep.unref();

  return {
    take,
    takeHeld,
    size: () => budgets.size,
    close: () => clearInterval(sweep),
  };
}
