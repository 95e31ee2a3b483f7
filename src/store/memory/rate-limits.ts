/** The memory store's rate-limit overrides and budget windows (store/rate-limits.ts RateLimitStore). */
import { grantOf, type RateLimitStore } from '../rate-limits.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memoryRateLimits(state: MemoryState): MemoryPart<RateLimitStore> {
  const { now, orgRateLimits, keyRateLimits, rateWindows } = state;
  return {
    sweep: (t) => {
      for (const [id, window] of rateWindows) if (window.start + window.windowMs <= t) rateWindows.delete(id);
    },
    methods: {
      async readRateLimits() {
        return { organizations: new Map(orgRateLimits), keys: new Map(keyRateLimits) };
      },

      async setRateLimit(target, limit) {
        if (target.kind === 'organization') {
          if (limit === null) orgRateLimits.delete(target.orgId);
          else orgRateLimits.set(target.orgId, limit);
        } else if (limit === null) {
          keyRateLimits.delete(target.keyId);
        } else {
          keyRateLimits.set(target.keyId, { orgId: target.orgId, limit });
        }
      },

      async dropRateLimits(orgId) {
        orgRateLimits.delete(orgId);
        for (const [keyId, { orgId: owner }] of keyRateLimits) if (owner === orgId) keyRateLimits.delete(keyId);
      },

      // Synchronous from start to end, as countAttempt: no other lease runs between check and count.
      async leaseRateBudget({ credentialId, limit, windowMs, want, replica }) {
        const t = now();
        let window = rateWindows.get(credentialId);
        if (window === undefined || window.windowMs !== windowMs || t >= window.start + window.windowMs) {
          window = { start: t, windowMs, used: 0, replicas: new Set() };
          rateWindows.set(credentialId, window);
        }
        const granted = grantOf(want, limit - window.used);
        window.used += granted;
        window.replicas.add(replica);
        return { granted, used: window.used, resetInMs: window.start + window.windowMs - t, replicas: window.replicas.size };
      },
    },
  };
}
