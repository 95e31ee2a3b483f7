/**
 * The plan part of the store contract (store/organization-plans.ts, issue 47): run by
 * storeContract on memory, standalone Redis, Sentinel and Cluster.
 */
import type { Test } from 'tap';
import type { GatewayStore, NewOrganization } from '../../src/store/store.js';

export function organizationPlanContract(t: Test, open: (t: Test) => Promise<GatewayStore>, helpers: { newOrganization: () => NewOrganization }): void {
  t.test('plans: an organization given a plan is in the table until moved back to the default; others never are', async (t) => {
    const store = await open(t);
    const [org, other] = [helpers.newOrganization(), helpers.newOrganization()];
    await store.createOrganizationIfEmailFree(org);
    await store.createOrganizationIfEmailFree(other);
    t.equal((await store.readOrganizationPlans()).get(org.id), undefined, 'a new organization is on the default');

    await store.setOrganizationPlan(org.id, 'partner');
    t.equal((await store.readOrganizationPlans()).get(org.id), 'partner');
    await store.setOrganizationPlan(org.id, 'free');
    const plans = await store.readOrganizationPlans();
    t.equal(plans.get(org.id), 'free', 'a second set replaces the first');
    t.equal(plans.get(other.id), undefined, "another organization's untouched");

    await store.setOrganizationPlan(org.id, null);
    t.equal((await store.readOrganizationPlans()).get(org.id), undefined, 'null: back to the default');
    await store.setOrganizationPlan(org.id, null);
    t.equal((await store.readOrganizationPlans()).has(org.id), false, 'removing twice is no error');
  });
}
