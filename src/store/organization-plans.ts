/**
 * The plan part of the store contract (issue 47): which organizations have a plan of their own
 * (the routes file's `plans`; the rest are on its `defaultPlan`). Like the rate-limit overrides,
 * one small table (only the organizations given a plan) that every replica keeps whole in memory
 * and reads again when any replica changes it, so a request finds its organization's plan
 * without a store round trip, and a change reaches every replica within a heartbeat.
 * Implemented by memory/organization-plans.ts and redis/organization-plans.ts.
 */

export interface OrganizationPlanStore {
  /** Every organization's own plan: organization id → plan name (organizations on the default are absent). */
  readOrganizationPlans(): Promise<ReadonlyMap<string, string>>;
  /**
   * Sets (a name) or removes (null: back to the default) the organization's plan, and announces it
   * on the invalidation bus as `{kind: 'plan', cacheKey: orgId}` in the same step, so every
   * replica reads the table again. The caller checks the organization and the plan's name.
   */
  setOrganizationPlan(orgId: string, plan: string | null): Promise<void>;
}
