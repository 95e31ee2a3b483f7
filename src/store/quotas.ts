/**
 * The quotas' storage contract (issue 47): how much of each organization's quota (and of an API
 * key's own, when it has one) a period has spent, counted in one atomic step so that the
 * replicas together never admit more than the quota. The quota keeper (limits/quota.ts) leases
 * from it and spends locally; the store only ever grants what the period still holds.
 * Implemented by memory/quotas.ts and redis/quotas.ts.
 */

/** One count a lease draws on: the organization's (keyId null) or one of its API keys'. */
export type QuotaCounter = Readonly<{ keyId: string | null; limit: number }>;

export type QuotaLease = Readonly<{
  orgId: string;
  /** The period's name (limits/quota.ts periodOf: `d2026-12-07`, `m2026-12`): by the gateway's clock. */
  period: string;
  /** Epoch ms when the period ends: the store forgets its counts a day after. */
  endsAt: number;
  /** The organization's first, then at most one key's: all of them are counted, the least left decides. */
  counters: readonly QuotaCounter[];
  want: number;
  /** All of `want` or nothing (one request's cost); otherwise as much as is left, up to want. */
  whole: boolean;
}>;

export type QuotaGrant = Readonly<{
  /** 0..want: never more than the least any counter has left. */
  granted: number;
  /** What the first counter (the organization's) has left after this grant. */
  left: number;
  /** What the counter with the least left has left after this grant (a key's, when it is the tighter). */
  leastLeft: number;
}>;

export interface QuotaStore {
  /** Atomically: grants (by `whole`) what every counter still holds and counts it on each. */
  leaseQuota(lease: QuotaLease): Promise<QuotaGrant>;
  /** Gives back leased units not spent (never below zero), so another replica may spend them. */
  returnQuota(orgId: string, period: string, keyIds: readonly (string | null)[], amount: number): Promise<void>;
  /** What the period has counted on the organization's (keyId null) or the key's counter. */
  readQuotaUsed(orgId: string, period: string, keyId: string | null): Promise<number>;
}

/** The one granting rule, in both stores: the least left over the counters decides. */
export function quotaGrantOf(want: number, whole: boolean, leftOfEach: readonly number[]): number {
  const left = Math.max(0, Math.min(...leftOfEach));
  if (want <= 0) return 0;
  if (want <= left) return want;
  return whole ? 0 : left;
}
