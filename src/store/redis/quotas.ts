/**
 * The Redis store's quota counts (store/quotas.ts QuotaStore): one hash per organization and
 * period on the organization's shard (keys.ts organizationQuota), the organization's count and
 * its keys' own, so a lease on both is one script.
 */
import type { QuotaStore } from '../quotas.js';
import type { RedisStoreContext } from './context.js';
import { unexpected } from './replies.js';

/** Kept a day past the period's end: the period's figures stay readable a while after it. */
const KEPT_AFTER_END_MS = 86_400_000;

const fieldOf = (keyId: string | null) => (keyId === null ? 'o' : `k${keyId}`);

export function redisQuotas(context: RedisStoreContext): QuotaStore {
  const { client, run, guard, organizationPlace } = context;
  const quotaKey = (orgId: string, period: string) => {
    const { shard, packed } = organizationPlace(orgId);
    return shard.organizationQuota(packed, period);
  };
  return {
    leaseQuota: ({ orgId, period, endsAt, counters, want, whole }) =>
      guard('leaseQuota', async () => {
        const wanted = Math.max(0, Math.floor(want));
        const args: (string | number)[] = [Math.floor(endsAt + KEPT_AFTER_END_MS), wanted, whole ? 1 : 0];
        for (const { keyId, limit } of counters) args.push(fieldOf(keyId), Math.max(0, Math.floor(limit)));
        const reply = await run.leaseQuota([quotaKey(orgId, period)], args);
        if (!Array.isArray(reply) || reply.length !== 3) throw unexpected('leaseQuota');
        const [granted, left, leastLeft] = reply as unknown[];
        if (typeof granted !== 'number' || typeof left !== 'number' || typeof leastLeft !== 'number' || granted < 0 || granted > wanted || left < 0 || leastLeft < 0) throw unexpected('leaseQuota');
        return { granted, left, leastLeft };
      }),

    returnQuota: (orgId, period, keyIds, amount) =>
      guard('returnQuota', async () => {
        if (amount <= 0 || keyIds.length === 0) return;
        await run.returnQuota([quotaKey(orgId, period)], [Math.floor(amount), ...keyIds.map(fieldOf)]);
      }),

    readQuotaUsed: (orgId, period, keyId) =>
      guard('readQuotaUsed', async () => Number((await client.hget(quotaKey(orgId, period), fieldOf(keyId))) ?? 0)),
  };
}
