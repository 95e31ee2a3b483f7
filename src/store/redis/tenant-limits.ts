/** The Redis store's tenant limits (store/tenant-limits.ts): an organization's own key limit. */
import type { TenantLimitStore } from '../tenant-limits.js';
import type { RedisStoreContext } from './context.js';
import { unexpected } from './replies.js';

export function redisTenantLimits(context: RedisStoreContext): TenantLimitStore {
  const { client, run, guard, organizationPlace } = context;
  return {
    /** An organization's own key limit: a field of its record (`maxKeys`), gone with it. */
    readKeyLimit: (orgId) =>
      guard('readKeyLimit', async () => {
        const { shard, packed } = organizationPlace(orgId);
        const value = await client.hget(shard.organization(packed), 'maxKeys');
        return value === null ? undefined : Number(value);
      }),

    setKeyLimit: (orgId, limit) =>
      guard('setKeyLimit', async () => {
        const { shard, packed } = organizationPlace(orgId);
        const reply = await run.setKeyLimit([shard.organization(packed)], [limit === null ? '' : Math.max(0, Math.floor(limit))]);
        if (reply !== 0 && reply !== 1) throw unexpected('setKeyLimit');
        return reply === 1;
      }),
  };
}
