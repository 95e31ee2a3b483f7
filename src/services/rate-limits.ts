// Rate-limit overrides as organizations and operators set them: an organization's (admin API) and
// a key's own (its owner, never above the organization's), validated here, stored in the table
// every replica keeps in memory (limits/policy.ts).
import { formatRateLimit, NO_LIMIT, notAbove, parseRateLimit, RATE_LIMIT_FORM, type RateLimit } from '../limits/rate-limit.js';
import type { RateLimitPolicy } from '../limits/policy.js';
import { Problem } from '../problems.js';
import type { RateLimitStore } from '../store/rate-limits.js';

export type RateLimitService = ReturnType<typeof createRateLimitService>;

export function createRateLimitService(deps: {
  store: Pick<RateLimitStore, 'setRateLimit' | 'dropRateLimits'>;
  policy: Pick<RateLimitPolicy, 'organizationLimit' | 'organizationOverride' | 'keyLimit' | 'reload'>;
}) {
  const { store, policy } = deps;
  // This replica applies its own change before answering; the others hear the store's announcement.
  const reread = () => policy.reload().catch(() => {}); // failing, the announcement's reread follows

  const parse = (text: string, field: string): RateLimit => {
    const limit = parseRateLimit(text);
    if (limit === undefined) throw new Problem('badRequest', `${field} must be ${RATE_LIMIT_FORM}.`);
    return limit;
  };

  return {
    /**
     * A key's own limit, checked against what its organization's credentials get (a key may only
     * be stricter): the stored form, to pass to setKey.
     */
    keyLimitFor(orgId: string, text: string): string {
      const limit = parse(text, 'rateLimit');
      const ceiling = policy.organizationLimit(orgId);
      if (ceiling !== undefined && !notAbove(limit, ceiling)) {
        throw new Problem('badRequest', `rateLimit must not be above the organization's (${formatRateLimit(ceiling)}).`);
      }
      return formatRateLimit(limit);
    },

    /** Sets (the stored form keyLimitFor gave) or removes (null) a key's own limit. */
    async setKey(orgId: string, keyId: string, stored: string | null): Promise<void> {
      await store.setRateLimit({ kind: 'api_key', orgId, keyId }, stored);
      await reread();
    },

    /** After a key is gone: its override too. Best effort: a stale one names a key that no longer exists. */
    async forgetKey(orgId: string, keyId: string): Promise<void> {
      if (policy.keyLimit(keyId) === undefined) return;
      await store.setRateLimit({ kind: 'api_key', orgId, keyId }, null).then(reread, () => {});
    },

    /** An organization's own limit: a limit, `off` (none, whatever the default), or null (the default again). */
    async setOrganization(orgId: string, text: string | null): Promise<void> {
      const stored = text === null || text === NO_LIMIT ? text : formatRateLimit(parse(text, 'rateLimit'));
      await store.setRateLimit({ kind: 'organization', orgId }, stored);
      await reread();
    },

    async dropOrganization(orgId: string): Promise<void> {
      await store.dropRateLimits(orgId);
      await reread();
    },

    /** A key's own limit as shown: `600/60s`, or null. */
    keyView(keyId: string): string | null {
      const own = policy.keyLimit(keyId);
      return own === undefined ? null : formatRateLimit(own);
    },

    /** An organization's limits as the admin API shows them: its override, and what applies. */
    organizationView(orgId: string): { rateLimit: string | null; effectiveRateLimit: string | null } {
      const applied = policy.organizationLimit(orgId);
      return { rateLimit: policy.organizationOverride(orgId) ?? null, effectiveRateLimit: applied === undefined ? null : formatRateLimit(applied) };
    },
  };
}
