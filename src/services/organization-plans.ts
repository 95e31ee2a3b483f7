/**
 * Moving an organization to another plan (issue 47): checked against the live routes file's
 * `plans`, written to the store's plan table, which announces it to every replica (the Redis
 * store's script PUBLISHes it with the write); this replica reads the table again itself, so the
 * change holds here before the answer. No key is rewritten: every request looks its
 * organization's plan up (plans/organization-plans.ts).
 */
import type { OrganizationPlans } from '../plans/organization-plans.js';
import { Problem } from '../problems.js';
import type { RouteTableSource } from '../route-table/types.js';
import type { OrganizationPlanStore } from '../store/organization-plans.js';
import type { Store } from '../store/store.js';

/** What a move changed: the organization's own plan before and after (null: the default). */
export type PlanChange = Readonly<{ orgId: string; from: string | null; to: string | null }>;

export function createPlanService(deps: {
  store: Pick<Store, 'findOrganizationById'> & OrganizationPlanStore;
  plans: Pick<OrganizationPlans, 'ownPlan' | 'reload'>;
  routes: RouteTableSource;
}) {
  const { store, plans, routes } = deps;
  return {
    /** `plan`: a plan the routes file declares, or null for its defaultPlan. 400 (1250) for another, 404 for no organization. */
    async change(orgId: string, plan: string | null): Promise<PlanChange> {
      const table = routes.current();
      if (plan !== null && !table.plans.has(plan)) {
        const declared = [...table.plans.keys()];
        throw new Problem('unknownPlan', declared.length === 0 ? 'The routes file declares no plans.' : `The routes file declares no plan ${plan} (it declares ${declared.join(', ')}).`);
      }
      if ((await store.findOrganizationById(orgId)) === undefined) throw new Problem('organizationNotFound');
      await plans.reload();
      const from = plans.ownPlan(orgId) ?? null;
      await store.setOrganizationPlan(orgId, plan);
      await plans.reload();
      return { orgId, from, to: plan };
    },

    /** After the organization is gone: its entry too. Best effort: a stale one names nobody. */
    async forget(orgId: string): Promise<void> {
      await store.setOrganizationPlan(orgId, null).catch(() => {});
    },
  };
}

export type PlanService = ReturnType<typeof createPlanService>;
