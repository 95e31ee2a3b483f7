/** The memory store's keys' own quotas (store/key-quotas.ts KeyQuotaStore). */
import type { KeyQuotaEntry, KeyQuotaStore } from '../key-quotas.js';
import type { MemoryPart } from './state.js';

export function memoryKeyQuotas(): MemoryPart<KeyQuotaStore> {
  const quotas = new Map<string, KeyQuotaEntry>();
  return {
    methods: {
      async readKeyQuotas() {
        return new Map(quotas);
      },
      // Nothing to announce: this store has no bus; the caller applies the change to this process.
      async setKeyQuota(orgId, keyId, quota) {
        if (quota === null) quotas.delete(keyId);
        else quotas.set(keyId, { orgId, quota });
      },
    },
  };
}
