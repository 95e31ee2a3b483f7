/** The memory store's organization plans (store/organization-plans.ts OrganizationPlanStore). */
import type { OrganizationPlanStore } from '../organization-plans.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memoryOrganizationPlans(state: MemoryState): MemoryPart<OrganizationPlanStore> {
  const { orgPlans } = state;
  return {
    methods: {
      async readOrganizationPlans() {
        return new Map(orgPlans);
      },
      // Nothing to announce: this store has no bus; the caller applies the change to this process.
      async setOrganizationPlan(orgId, plan) {
        if (plan === null) orgPlans.delete(orgId);
        else orgPlans.set(orgId, plan);
      },
    },
  };
}
