/**
 * The Redis store's organization plans (store/organization-plans.ts): one small hash per
 * environment (keys.ts organizationPlans), organization id → plan name, read whole by every replica.
 */
import type { OrganizationPlanStore } from '../organization-plans.js';
import type { RedisStoreContext } from './context.js';
import { unexpected } from './replies.js';

export function redisOrganizationPlans(context: RedisStoreContext): OrganizationPlanStore {
  const { client, keys, run, announced, guard } = context;
  return {
    readOrganizationPlans: () =>
      guard('readOrganizationPlans', async () => {
        const entries = await client.hgetall(keys.organizationPlans);
        return new Map(Object.entries(entries).filter(([orgId, plan]) => orgId !== '' && plan !== ''));
      }),

    /** One script that announces the change and writes it (scripts/setOrganizationPlan.lua). */
    setOrganizationPlan: async (orgId, plan) =>
      announced((channel, head) => guard('setOrganizationPlan', async () => {
        const reply = await run.setOrganizationPlan([keys.organizationPlans], [orgId, plan ?? '', channel, head]);
        if (reply !== 1) throw unexpected('setOrganizationPlan');
      })),
  };
}
