/** The memory store's quota counts (store/quotas.ts QuotaStore): one number per counter and period. */
import { quotaGrantOf, type QuotaStore } from '../quotas.js';
import type { MemoryPart } from './state.js';

/** Kept a day past the period's end, as the Redis store keeps them. */
const KEPT_AFTER_END_MS = 86_400_000;

const nameOf = (orgId: string, period: string, keyId: string | null) => `${orgId}\n${period}\n${keyId ?? ''}`;

export function memoryQuotas(): MemoryPart<QuotaStore> {
  const counts = new Map<string, { used: number; forgetAt: number }>();
  const usedOf = (name: string) => counts.get(name)?.used ?? 0;

  return {
    sweep: (t) => {
      for (const [name, count] of counts) if (count.forgetAt <= t) counts.delete(name);
    },
    methods: {
      // Synchronous from start to end: no other lease runs between the check and the count.
      async leaseQuota({ orgId, period, endsAt, counters, want, whole }) {
        const names = counters.map((counter) => nameOf(orgId, period, counter.keyId));
        const lefts = counters.map((counter, i) => counter.limit - usedOf(names[i]!));
        const granted = quotaGrantOf(want, whole, lefts);
        if (granted > 0) {
          for (const name of names) {
            const count = counts.get(name);
            if (count === undefined) counts.set(name, { used: granted, forgetAt: endsAt + KEPT_AFTER_END_MS });
            else count.used += granted;
          }
        }
        return { granted, left: Math.max(0, lefts[0]! - granted), leastLeft: Math.max(0, Math.min(...lefts) - granted) };
      },

      async returnQuota(orgId, period, keyIds, amount) {
        for (const keyId of keyIds) {
          const count = counts.get(nameOf(orgId, period, keyId));
          if (count !== undefined) count.used = Math.max(0, count.used - Math.max(0, amount));
        }
      },

      async readQuotaUsed(orgId, period, keyId) {
        return usedOf(nameOf(orgId, period, keyId));
      },
    },
  };
}
