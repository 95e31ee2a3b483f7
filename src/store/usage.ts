/**
 * The usage part of the gateway's store (store.ts GatewayStore, issue 47): how many requests each
 * organization and each of its API keys made, by hour and by day, by outcome. The gateway counts
 * in memory on the request path and writes here in batches (services/usage-recorder.ts), so this
 * is no hot-path read or write. Implemented by memory/usage.ts and redis/usage.ts.
 */

/** What became of a request on a forwarded route, for an organization the gateway knew. */
export const USAGE_OUTCOMES = ['admitted', 'credential', 'scope', 'rate_limit', 'quota'] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];
export type UsageCounts = Readonly<Record<UsageOutcome, number>>;

export type UsageGranularity = 'hour' | 'day';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** How long the store keeps an hour's figures and a day's, from the bucket's start. */
export const USAGE_KEPT_MS: Readonly<Record<UsageGranularity, number>> = { hour: 7 * DAY_MS, day: 90 * DAY_MS };

/** Some requests of one organization (and one of its API keys, or none) in one UTC hour. */
export type UsageIncrement = Readonly<{
  orgId: string;
  /** The API key's id; null for a login token (counted in the organization's figures only). */
  keyId: string | null;
  /** Epoch ms of the UTC hour's start (hourOf). */
  hour: number;
  /** By USAGE_OUTCOMES' order. */
  counts: readonly number[];
}>;

export type UsageQuery = Readonly<{
  orgId: string;
  /** One API key's figures; the organization's (all its credentials) when absent. */
  keyId?: string;
  granularity: UsageGranularity;
  /** Epoch ms, both bucket starts (hourOf / dayOf): every bucket from `from` to `to`, both included. */
  from: number;
  to: number;
}>;

export type UsageBucket = Readonly<{ start: number; counts: UsageCounts }>;

export interface UsageStore {
  /**
   * Adds each increment to its hour and its day, for the organization and (when given) the key,
   * each bucket forgotten USAGE_KEPT_MS after its start. Each organization's part is one atomic
   * step: its hour and its day never disagree.
   */
  recordUsage(increments: readonly UsageIncrement[]): Promise<void>;
  /** Every bucket of the range, oldest first, zeros included (nothing recorded, or forgotten). */
  readUsage(query: UsageQuery): Promise<UsageBucket[]>;
}

export const hourOf = (at: number): number => at - (at % HOUR_MS);
export const dayOf = (at: number): number => at - (at % DAY_MS);
export const bucketOf = (at: number, granularity: UsageGranularity): number => (granularity === 'hour' ? hourOf(at) : dayOf(at));
export const stepOf = (granularity: UsageGranularity): number => (granularity === 'hour' ? HOUR_MS : DAY_MS);

/** The bucket starts of a query, oldest first. */
export function bucketStarts(query: Pick<UsageQuery, 'granularity' | 'from' | 'to'>): number[] {
  const step = stepOf(query.granularity);
  const starts: number[] = [];
  for (let start = bucketOf(query.from, query.granularity); start <= query.to; start += step) starts.push(start);
  return starts;
}

/** Counts by USAGE_OUTCOMES' order as a record, missing ones 0. */
export function usageCounts(values: readonly (number | undefined)[]): UsageCounts {
  const counts = {} as Record<UsageOutcome, number>;
  USAGE_OUTCOMES.forEach((outcome, i) => (counts[outcome] = values[i] ?? 0));
  return counts;
}
