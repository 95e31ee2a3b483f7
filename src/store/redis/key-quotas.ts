/**
 * The Redis store's keys' own quotas (store/key-quotas.ts): one small hash per environment
 * (keys.ts keyQuotas), key id → `<org id> <quota>`, read whole by every replica.
 */
import type { KeyQuotaEntry, KeyQuotaStore } from '../key-quotas.js';
import type { RedisStoreContext } from './context.js';
import { unexpected } from './replies.js';

export function redisKeyQuotas(context: RedisStoreContext): KeyQuotaStore {
  const { client, keys, run, announced, guard } = context;
  return {
    readKeyQuotas: () =>
      guard('readKeyQuotas', async () => {
        const entries = await client.hgetall(keys.keyQuotas);
        const table = new Map<string, KeyQuotaEntry>();
        for (const [keyId, value] of Object.entries(entries)) {
          const space = value.indexOf(' ');
          if (keyId !== '' && space > 0) table.set(keyId, { orgId: value.slice(0, space), quota: value.slice(space + 1) });
        }
        return table;
      }),

    /** One script that announces the change and writes it (scripts/setKeyQuota.lua). */
    setKeyQuota: async (orgId, keyId, quota) =>
      announced((channel, head) => guard('setKeyQuota', async () => {
        const reply = await run.setKeyQuota([keys.keyQuotas], [orgId, keyId, quota ?? '', channel, head]);
        if (reply !== 1) throw unexpected('setKeyQuota');
      })),
  };
}
