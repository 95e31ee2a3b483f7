/**
 * The Redis store's usage figures (store/usage.ts UsageStore): one hash per organization per UTC
 * hour and per day, on the organization's shard (keys.ts organizationUsage).
 */
import { dayOf, USAGE_KEPT_MS, USAGE_OUTCOMES, bucketStarts, usageCounts, type UsageStore } from '../usage.js';
import type { RedisStoreContext } from './context.js';
import { unexpected } from './replies.js';

/** A key's fields in the organization's buckets: `k<key id>:<outcome index>`. */
const keyPrefix = (keyId: string) => `k${keyId}:`;

export function redisUsage(context: RedisStoreContext): UsageStore {
  const { run, guard, organizationPlace } = context;
  return {
    /**
     * One script per organization and hour (its hour and day together), all sent at once without
     * waiting for each other, as recordApiKeyUse: a pipeline in effect, across Cluster shards too.
     */
    recordUsage: (increments) =>
      guard('recordUsage', async () => {
        const byBucket = new Map<string, { orgId: string; hour: number; fields: Map<string, number> }>();
        for (const { orgId, keyId, hour, counts } of increments) {
          const name = `${orgId}\n${hour}`;
          let bucket = byBucket.get(name);
          if (bucket === undefined) byBucket.set(name, (bucket = { orgId, hour, fields: new Map() }));
          counts.forEach((count, i) => {
            if (count <= 0) return;
            bucket.fields.set(`${i}`, (bucket.fields.get(`${i}`) ?? 0) + count);
            if (keyId !== null) bucket.fields.set(keyPrefix(keyId) + i, (bucket.fields.get(keyPrefix(keyId) + i) ?? 0) + count);
          });
        }
        await Promise.all([...byBucket.values()].map(({ orgId, hour, fields }) => {
          if (fields.size === 0) return undefined;
          const { shard, packed } = organizationPlace(orgId);
          const day = dayOf(hour);
          const args: (string | number)[] = [hour + USAGE_KEPT_MS.hour, day + USAGE_KEPT_MS.day];
          for (const [field, count] of fields) args.push(field, count);
          return run.recordUsage([shard.organizationUsage(packed, 'h', hour), shard.organizationUsage(packed, 'd', day)], args);
        }));
      }),

    /** One script reads every bucket of the range (one organization's: one shard). */
    readUsage: (query) =>
      guard('readUsage', async () => {
        const { shard, packed } = organizationPlace(query.orgId);
        const starts = bucketStarts(query);
        if (starts.length === 0) return [];
        const letter = query.granularity === 'hour' ? 'h' : 'd';
        const reply = await run.readUsage(
          starts.map((start) => shard.organizationUsage(packed, letter, start)),
          [query.keyId === undefined ? '' : keyPrefix(query.keyId), USAGE_OUTCOMES.length],
        );
        const n = USAGE_OUTCOMES.length;
        if (!Array.isArray(reply) || reply.length !== starts.length * n) throw unexpected('readUsage');
        return starts.map((start, b) => ({
          start,
          counts: usageCounts((reply as unknown[]).slice(b * n, b * n + n).map((value) => (typeof value === 'string' ? Number(value) : 0))),
        }));
      }),
  };
}
