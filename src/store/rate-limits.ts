/**
 * The rate limits' storage contract (issue 17): the overrides operators and organizations set
 * (one small table every replica keeps in memory, read again when any replica changes it), and
 * the budget each replica leases per credential and window. The limiter (limits/limiter.ts) spends
 * leased budget locally, so a request costs no store round trip; the store only ever grants what
 * the window still holds, so the replicas together never admit more than the limit while the
 * store answers.
 */

/** A limit as stored: `<count>/<seconds>s` (limits/rate-limit.ts formatLimit), or `off`. */
export type StoredLimit = string;

/**
 * Every override: an organization's (its credentials' limit; `off` exempts it from the default)
 * and a key's own (never above its organization's when set; the limiter takes the lower anyway).
 */
export type RateLimitTable = Readonly<{
  organizations: ReadonlyMap<string, StoredLimit>;
  keys: ReadonlyMap<string, Readonly<{ orgId: string; limit: StoredLimit }>>;
}>;

export type RateLimitTarget = Readonly<{ kind: 'organization'; orgId: string } | { kind: 'api_key'; orgId: string; keyId: string }>;

/** A request for budget: `want` more of `limit` in the credential's current window. */
export type RateLease = Readonly<{
  /** The credential: an API key's id or a session's id. */
  credentialId: string;
  /** Its organization (the Redis store keeps the counter on the organization's shard). */
  orgId: string;
  limit: number;
  windowMs: number;
  want: number;
  /** This replica's id, so the store can say how many replicas draw on the window. */
  replica: string;
}>;

export type RateGrant = Readonly<{
  /** 0..want: never more than the window has left. */
  granted: number;
  /** Counted in the window after this grant (what every replica was granted, spent or not). */
  used: number;
  /** When the window ends, from now. The first lease of a credential opens its window. */
  resetInMs: number;
  /** How many replicas drew on this window (this one included). */
  replicas: number;
}>;

export interface RateLimitStore {
  readRateLimits(): Promise<RateLimitTable>;
  /**
   * Sets (a limit) or removes (null) one override, and announces it on the invalidation bus as
   * `{kind: 'rate_limits', cacheKey: orgId}` in the same step, so every replica reads the table again.
   */
  setRateLimit(target: RateLimitTarget, limit: StoredLimit | null): Promise<void>;
  /** Removes the organization's override and every override of its keys (announced as above). */
  dropRateLimits(orgId: string): Promise<void>;
  /**
   * Atomically: opens the credential's window if it has none (or the limit's window length
   * changed), then grants min(want, what is left, a quarter of what is left rounded up) and
   * counts it. So a window never grants more than `limit`, on any number of replicas.
   */
  leaseRateBudget(lease: RateLease): Promise<RateGrant>;
}

/** What a lease grants of what is left: the same rule in both stores. */
export function grantOf(want: number, left: number): number {
  if (left <= 0 || want <= 0) return 0;
  return Math.min(want, left, Math.max(1, Math.ceil(left / 4)));
}
