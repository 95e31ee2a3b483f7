/**
 * Which plan (the routes file's `plans`, issue 47) each organization is on, as every replica
 * keeps it: the organizations given a plan of their own (store/organization-plans.ts), one small
 * table read at start and again whenever any replica changes it (announced on the invalidation
 * bus as `plan`) or the bus may have missed messages ('all'). The plan is looked up per request
 * against the request's own route table, never kept in a cached principal: a change of an
 * organization's plan, or of the file, holds from the next request, without touching any key.
 */
import type { Logger } from '../observability/logging.js';
import type { InvalidationBus } from '../store/invalidation.js';
import type { OrganizationPlanStore } from '../store/organization-plans.js';
import type { CompiledPlan, RouteTable } from '../route-table/types.js';
import { replicateTable } from '../store/replicated-table.js';

/** What holds until the table was first read: only the gateway's own scopes (fail closed). */
const UNREAD: CompiledPlan = Object.freeze({
  name: '(unread)',
  description: undefined,
  scopeNames: [],
  all: false,
  bits: new Int32Array(0),
  rateLimit: undefined,
  quota: undefined,
  maxKeys: undefined,
});

export type OrganizationPlans = Readonly<{
  /**
   * The hot path: the plan an organization's requests are decided by under `table`; undefined
   * when the table has no plans (or none applies: no plan of its own and no defaultPlan), which
   * leaves every scope to the credential. Its own plan when the table has it, else the default
   * (logged once per table and plan, and counted: the file dropped a plan organizations are on).
   */
  planOf(orgId: string, table: RouteTable): CompiledPlan | undefined;
  /** The organization's own plan's name, as stored (undefined: the default). */
  ownPlan(orgId: string): string | undefined;
  /** Reads the table now (at start, and after this replica changed it). */
  reload(): Promise<void>;
  close(): void;
}>;

/** What the request paths need of it. */
export type PlanLookup = Pick<OrganizationPlans, 'planOf'>;

export async function createOrganizationPlans(deps: {
  store: Pick<OrganizationPlanStore, 'readOrganizationPlans'>;
  bus: Pick<InvalidationBus, 'onInvalidation'>;
  logger: Pick<Logger, 'warn'>;
  /** Counts a decision made under the default because the organization's plan is no longer in the file. */
  onFallback: (plan: string) => void;
}): Promise<OrganizationPlans> {
  let own: ReadonlyMap<string, string> = new Map();
  let loaded = false;
  /** Table → the removed plans already logged for it: one warning per table and plan. */
  const warned = new WeakMap<RouteTable, Set<string>>();

  // Until the first read, an organization's own plan is unknown: with plans in the file, its
  // requests get only the gateway's own scopes (never more than its plan might allow).
  const replica = await replicateTable({
    read: async () => {
      own = await deps.store.readOrganizationPlans();
      loaded = true;
    },
    kind: 'plan',
    bus: deps.bus,
    onReloadFailed: (error) => deps.logger.warn({ event: 'plans.reload_failed', err: error }, 'could not read the organizations\' plans; keeping those in memory'),
  });

  function fallback(orgId: string, name: string, table: RouteTable): CompiledPlan | undefined {
    deps.onFallback(name);
    let logged = warned.get(table);
    if (logged === undefined) warned.set(table, (logged = new Set()));
    if (!logged.has(name)) {
      logged.add(name);
      deps.logger.warn(
        { event: 'plan.fallback', orgId, plan: name, defaultPlan: table.defaultPlan?.name ?? null, routesHash: table.hash },
        `an organization's plan ${name} is not in the routes file: its organizations are on the default plan until it is back or they are moved`,
      );
    }
    return table.defaultPlan;
  }

  return {
    planOf(orgId, table) {
      if (table.plans.size === 0) return undefined;
      if (!loaded) return UNREAD;
      const name = own.get(orgId);
      if (name === undefined) return table.defaultPlan;
      return table.plans.get(name) ?? fallback(orgId, name, table);
    },
    ownPlan: (orgId) => own.get(orgId),
    reload: replica.reload,
    close: replica.close,
  };
}
