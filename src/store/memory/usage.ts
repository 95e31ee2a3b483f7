/** The memory store's usage figures (store/usage.ts UsageStore): one count array per bucket. */
import { bucketStarts, dayOf, USAGE_KEPT_MS, USAGE_OUTCOMES, usageCounts, type UsageGranularity, type UsageStore } from '../usage.js';
import type { MemoryPart } from './state.js';

const nameOf = (orgId: string, keyId: string | null, granularity: UsageGranularity, start: number) => `${orgId}\n${keyId ?? ''}\n${granularity}\n${start}`;

export function memoryUsage(now: () => number): MemoryPart<UsageStore> {
  /** Bucket name → counts by USAGE_OUTCOMES' order, and when it is forgotten. */
  const buckets = new Map<string, { counts: number[]; forgetAt: number }>();

  function add(name: string, forgetAt: number, counts: readonly number[]): void {
    let bucket = buckets.get(name);
    if (bucket === undefined) buckets.set(name, (bucket = { counts: USAGE_OUTCOMES.map(() => 0), forgetAt }));
    counts.forEach((count, i) => (bucket.counts[i]! += count));
  }

  return {
    sweep: (t) => {
      for (const [name, bucket] of buckets) if (bucket.forgetAt <= t) buckets.delete(name);
    },
    methods: {
      // Synchronous from start to end: each increment's hour and day are added together.
      async recordUsage(increments) {
        for (const { orgId, keyId, hour, counts } of increments) {
          const day = dayOf(hour);
          for (const who of keyId === null ? [null] : [null, keyId]) {
            add(nameOf(orgId, who, 'hour', hour), hour + USAGE_KEPT_MS.hour, counts);
            add(nameOf(orgId, who, 'day', day), day + USAGE_KEPT_MS.day, counts);
          }
        }
      },

      async readUsage(query) {
        const t = now();
        return bucketStarts(query).map((start) => {
          const bucket = buckets.get(nameOf(query.orgId, query.keyId ?? null, query.granularity, start));
          // One the sweep has not reached yet is forgotten all the same.
          return { start, counts: usageCounts(bucket !== undefined && bucket.forgetAt > t ? bucket.counts : []) };
        });
      },
    },
  };
}
