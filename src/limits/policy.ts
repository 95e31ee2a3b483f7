/**
 * Which rate limit applies to a credential: its key's own, else its organization's, else the
 * default (AUTHGATE_RATE_LIMIT), a key's never above what its organization's would be. The
 * overrides are one small table (store/rate-limits.ts) every replica keeps in memory: read at
 * start, and again whenever any replica changes it (the store announces each change on the
 * invalidation bus) or the bus may have missed messages. So the request path asks the store
 * nothing to know its limit: two Map lookups.
 */
import type { Principal } from '../credentials/principal.js';
import type { Logger } from '../observability/logging.js';
import type { InvalidationBus } from '../store/invalidation.js';
import type { RateLimitStore, RateLimitTable } from '../store/rate-limits.js';
import { formatRateLimit, lowerOf, NO_LIMIT, parseRateLimit, type RateLimit } from './rate-limit.js';
import { replicateTable } from '../store/replicated-table.js';

/** A limit as the limiter uses it, with its RateLimit-Policy value made once. */
export type AppliedLimit = RateLimit &
  Readonly<{
    windowMs: number;
    /** `"credential";q=<count>;w=<seconds>` (IETF draft-ietf-httpapi-ratelimit-headers). */
    policyHeader: string;
  }>;

/** The policy name in RateLimit-Policy and RateLimit: the limit is per credential. */
export const POLICY_NAME = 'credential';

/**
 * Limits as the limiter uses them under one policy name (the credential's, a route's:
 * route-limit.ts): one object per distinct limit, so a budget survives a reload that keeps the
 * limit (limiter.ts compares them) and the RateLimit-Policy value is made once.
 */
export function limitApplier(policyName: string): (limit: RateLimit) => AppliedLimit {
  const applied = new Map<string, AppliedLimit>(); // by formatRateLimit
  return (limit) => {
    const name = formatRateLimit(limit);
    let made = applied.get(name);
    if (made === undefined) {
      made = Object.freeze({ ...limit, windowMs: limit.windowSeconds * 1000, policyHeader: `"${policyName}";q=${limit.count};w=${limit.windowSeconds}` });
      applied.set(name, made);
    }
    return made;
  };
}

export type RateLimitPolicy = Readonly<{
  /** The hot path: the credential's limit, or undefined when it has none. */
  limitFor(principal: Principal): AppliedLimit | undefined;
  /** What an organization's credentials get without a key limit of their own: undefined, none. */
  organizationLimit(orgId: string): RateLimit | undefined;
  /** The organization's own override as stored: a limit, `off`, or undefined (the default applies). */
  organizationOverride(orgId: string): string | undefined;
  /** The key's own limit, if it has one. */
  keyLimit(keyId: string): RateLimit | undefined;
  /** Reads the table now (at start, and after this replica changed it). */
  reload(): Promise<void>;
  close(): void;
}>;

export async function createRateLimitPolicy(deps: {
  store: Pick<RateLimitStore, 'readRateLimits'>;
  bus: Pick<InvalidationBus, 'onInvalidation'>;
  defaultLimit: RateLimit | undefined;
  logger: Pick<Logger, 'warn'>;
  /**
   * The `rateLimit` of the organization's plan (issue 47), if it has one: its credentials' default
   * in place of AUTHGATE_RATE_LIMIT (an organization's own override still wins).
   */
  planLimit?: (orgId: string) => RateLimit | undefined;
}): Promise<RateLimitPolicy> {
  const apply = limitApplier(POLICY_NAME);
  const fallback = deps.defaultLimit && apply(deps.defaultLimit);
  // A plan's limit is one object per compiled table: applied once, not formatted per request.
  const appliedPlanLimits = new WeakMap<RateLimit, AppliedLimit>();
  const planLimit = deps.planLimit;
  const defaultFor = planLimit === undefined ? () => fallback : (orgId: string): AppliedLimit | undefined => {
    const limit = planLimit(orgId);
    if (limit === undefined) return fallback;
    let made = appliedPlanLimits.get(limit);
    if (made === undefined) appliedPlanLimits.set(limit, (made = apply(limit)));
    return made;
  };

  let organizations = new Map<string, AppliedLimit | null>(); // null: `off`
  let overrides = new Map<string, string>();
  let keys = new Map<string, AppliedLimit>();

  function adopt(table: RateLimitTable): void {
    const nextOrganizations = new Map<string, AppliedLimit | null>();
    for (const [orgId, stored] of table.organizations) {
      const limit = stored === NO_LIMIT ? null : parseRateLimit(stored);
      if (limit !== undefined) nextOrganizations.set(orgId, limit && apply(limit));
    }
    const nextKeys = new Map<string, AppliedLimit>();
    for (const [keyId, { limit: stored }] of table.keys) {
      const limit = parseRateLimit(stored);
      if (limit !== undefined) nextKeys.set(keyId, apply(limit));
    }
    organizations = nextOrganizations;
    overrides = new Map(table.organizations);
    keys = nextKeys;
  }

  // Until the table is first read (a gateway starts while its store may still be connecting), the
  // default applies to everyone.
  const replica = await replicateTable({
    read: async () => adopt(await deps.store.readRateLimits()),
    kind: 'rate_limits',
    bus: deps.bus,
    // The table in memory stays; the next announcement (or 'all' after a reconnect) reads again.
    onReloadFailed: (error) => deps.logger.warn({ event: 'rate_limits.reload_failed', err: error }, 'could not read the rate-limit overrides; keeping those in memory'),
  });

  const organizationLimit = (orgId: string): AppliedLimit | undefined => {
    const own = organizations.get(orgId);
    return own === undefined ? defaultFor(orgId) : own ?? undefined;
  };
  return {
    limitFor(principal) {
      const base = organizationLimit(principal.orgId);
      if (principal.via !== 'api_key') return base;
      const own = keys.get(principal.credentialId);
      if (own === undefined) return base;
      return base === undefined ? own : (lowerOf(own, base) as AppliedLimit);
    },
    organizationLimit,
    organizationOverride: (orgId) => overrides.get(orgId),
    keyLimit: (keyId) => keys.get(keyId),
    reload: replica.reload,
    close: replica.close,
  };
}
