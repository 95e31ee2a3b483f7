import type { RateLimit } from '../limits/rate-limit.js';
import { Problem } from '../problems.js';
import type { CounterStore } from '../store/store.js';

/**
 * What bounds one organization's growth (issue 26), besides the counts the store checks in the
 * step that writes (AUTHGATE_MAX_KEYS_PER_ORGANIZATION, AUTHGATE_MAX_SESSIONS_PER_ORGANIZATION):
 * how many keys (created or rolled) and sessions (logins) it makes per window. Counted in the
 * store (CounterStore.countAttempt: one atomic check-and-count), so every replica shares one
 * window and a parallel burst on any number of them gets exactly the limit through.
 */
export type TenantGrowthLimits = Readonly<{ maxKeys: number; keyCreation: RateLimit | undefined; maxSessions: number; sessionCreation: RateLimit | undefined }>;

export type TenantGrowth = Readonly<{
  maxKeys: number;
  maxSessions: number;
  /** Counts a key made by orgId, or throws 429 (tooManyKeyCreations, with Retry-After). */
  admitKeyCreation(orgId: string): Promise<void>;
  /** Counts a login of orgId, or throws 429 (tooManyLogins, with Retry-After). */
  admitLogin(orgId: string): Promise<void>;
}>;

export function createTenantGrowth(counters: CounterStore, limits: TenantGrowthLimits): TenantGrowth {
  async function admit(kind: 'keys' | 'logins', orgId: string, limit: RateLimit | undefined): Promise<void> {
    if (limit === undefined) return;
    // The braces place the counter with the organization's own data (its shard tag).
    const verdict = await counters.countAttempt({ counters: [{ name: `tenant:${kind}:{${orgId}}`, limit: limit.count }], windowMs: limit.windowSeconds * 1000 });
    if (verdict.allowed) return;
    const seconds = Math.max(1, Math.ceil(verdict.retryInMs / 1000));
    if (kind === 'keys') throw new Problem('tooManyKeyCreations', `This organization created ${limit.count} API keys in ${limit.windowSeconds} seconds; try again in ${seconds} seconds.`, 'key_creation_throttled', seconds);
    throw new Problem('tooManyLogins', `This organization logged in ${limit.count} times in ${limit.windowSeconds} seconds; try again in ${seconds} seconds.`, 'login_throttled', seconds);
  }
  return {
    maxKeys: limits.maxKeys,
    maxSessions: limits.maxSessions,
    admitKeyCreation: (orgId) => admit('keys', orgId, limits.keyCreation),
    admitLogin: (orgId) => admit('logins', orgId, limits.sessionCreation),
  };
}
