/**
 * The embedded default: everything in this process, gone when it exits. Every method runs to
 * completion without awaiting anything, which is what makes each one atomic here. Assembled
 * from one part per concern (memory/*.ts), each over the one shared state (memory/state.ts).
 */
import type { GatewayStore } from './store.js';
import { createMemoryAudit } from './memory/audit.js';
import { memoryApiKeys } from './memory/api-keys.js';
import { memoryCounters } from './memory/counters.js';
import { memoryOrganizations } from './memory/organizations.js';
import { memoryPasswordResets } from './memory/password-resets.js';
import { memoryOrganizationProfiles } from './memory/organization-profiles.js';
import { memoryMfa } from './memory/mfa.js';
import { memoryPasskeys } from './memory/passkeys.js';
import { memoryMembers } from './memory/members.js';
import { memoryMemberPasswords } from './memory/member-passwords.js';
import { memoryRateLimits } from './memory/rate-limits.js';
import { memoryOrganizationPlans } from './memory/organization-plans.js';
import { memorySessions } from './memory/sessions.js';
import { createMemoryState } from './memory/state.js';
import { memoryTenantLimits } from './memory/tenant-limits.js';
import { memoryExternalIds } from './memory/external-ids.js';
import { memoryUsage } from './memory/usage.js';
import { memoryQuotas } from './memory/quotas.js';
import { memoryKeyQuotas } from './memory/key-quotas.js';

export type MemoryStoreOptions = { now?: () => number; sweepIntervalMs?: number };

export function createMemoryStore(options: MemoryStoreOptions = {}): GatewayStore {
  const now = options.now ?? Date.now;
  const state = createMemoryState(now);
  const parts = [
    memoryOrganizations(state),
    memoryApiKeys(state),
    memorySessions(state),
    memoryCounters(state),
    memoryTenantLimits(state),
    memoryRateLimits(state),
    memoryPasswordResets(state),
    memoryOrganizationProfiles(state),
    memoryMfa(state),
    memoryPasskeys(state),
    memoryUsage(now),
    memoryQuotas(),
    memoryOrganizationPlans(state),
    memoryKeyQuotas(),
    memoryExternalIds(state),
    memoryMembers(state),
    memoryMemberPasswords(state),
  ] as const;
  const [organizations, apiKeys, sessions, counters, tenantLimits, rateLimits, passwordResets, profiles, mfa, passkeys, usage, quotas, plans, keyQuotas, externalIds, members, memberPasswords] = parts;

  // Expired sessions, counters, known sets and rate windows would otherwise stay forever.
  const sweeper = setInterval(() => {
    const t = now();
    for (const part of parts) part.sweep?.(t);
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();

  return {
    ...organizations.methods,
    ...apiKeys.methods,
    ...sessions.methods,
    ...counters.methods,
    // The audit trail: one bounded log per organization (memory/audit.ts).
    ...createMemoryAudit(now),
    ...tenantLimits.methods,
    ...rateLimits.methods,
    ...passwordResets.methods,
    ...profiles.methods,
    ...mfa.methods,
    ...passkeys.methods,
    ...usage.methods,
    ...quotas.methods,
    ...plans.methods,
    ...keyQuotas.methods,
    ...externalIds.methods,
    ...members.methods,
    ...memberPasswords.methods,

    async ping() {},

    async close() {
      clearInterval(sweeper);
    },
  };
}
