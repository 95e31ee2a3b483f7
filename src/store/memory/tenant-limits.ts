/** The memory store's tenant limits (store/tenant-limits.ts): organizations' own API-key limits. */
import type { TenantLimitStore } from '../tenant-limits.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memoryTenantLimits(state: MemoryState): MemoryPart<TenantLimitStore> {
  const { orgsById, keyLimits } = state;
  return {
    methods: {
      async readKeyLimit(orgId) {
        return keyLimits.get(orgId);
      },

      async setKeyLimit(orgId, limit) {
        if (!orgsById.has(orgId)) return false;
        if (limit === null) keyLimits.delete(orgId);
        else keyLimits.set(orgId, limit);
        return true;
      },
    },
  };
}
