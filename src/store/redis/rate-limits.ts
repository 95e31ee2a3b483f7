/**
 * The Redis store's rate limits (store/rate-limits.ts RateLimitStore): the overrides, one small
 * hash per environment, and each credential's budget window on its organization's shard.
 */
import type { RateLimitStore } from '../rate-limits.js';
import { shardTagOf } from '../shard-tag.js';
import type { RedisStoreContext } from './context.js';
import { rateGrant, rateLimitEntry, rateLimitTable, unexpected } from './replies.js';

export function redisRateLimits(context: RedisStoreContext): RateLimitStore {
  const { client, keys, run, announced, guard } = context;
  return {
    /** One HGETALL: the table is overrides only, one small hash per environment. */
    readRateLimits: () => guard('readRateLimits', async () => rateLimitTable(await client.hgetall(keys.rateLimits))),

    /** One script that announces the change and writes it (scripts/setRateLimit.lua). */
    setRateLimit: async (target, limit) => {
      // Checked before a message is handed out: a bad argument is a bug, not an outage.
      const [field, value] = rateLimitEntry(target, limit);
      return announced((channel, head) => guard('setRateLimit', async () => {
        const reply = await run.setRateLimit([keys.rateLimits], [field, value, channel, head, target.orgId]);
        if (reply !== 1) throw unexpected('setRateLimit');
      }));
    },

    dropRateLimits: async (orgId) => {
      rateLimitEntry({ kind: 'organization', orgId }, null);
      return announced((channel, head) => guard('dropRateLimits', async () => {
        const reply = await run.dropRateLimits([keys.rateLimits], [orgId, channel, head]);
        if (typeof reply !== 'number') throw unexpected('dropRateLimits');
      }));
    },

    /** One script on the credential's window, on its organization's shard, by Redis's clock. */
    leaseRateBudget: ({ credentialId, orgId, limit, windowMs, want, replica }) =>
      guard('leaseRateBudget', async () => {
        const wanted = Math.max(0, Math.floor(want));
        const reply = await run.leaseRateBudget(
          [keys.shard(shardTagOf(orgId)).rateWindow(credentialId)],
          [Math.max(0, Math.floor(limit)), Math.max(1, Math.ceil(windowMs)), wanted, replica],
        );
        return rateGrant(reply, wanted);
      }),
  };
}
