// What the composition root (gateway.ts) builds for plans' quotas and usage figures (issue 47):
// the organizations' plans as every replica keeps them, the quota keeper and its gate, the usage
// recorder. Apart so gateway.ts stays the wiring.
import { createQuotaGate, type QuotaGate } from './limits/quota-check.js';
import { createQuotaKeeper, type QuotaKeeper } from './limits/quota.js';
import type { Logger } from './observability/logging.js';
import type { Metrics } from './observability/metrics.js';
import { createOrganizationPlans, type OrganizationPlans } from './plans/organization-plans.js';
import { createUsageRecorder, type UsageRecorder } from './services/usage-recorder.js';
import { createUsageReports, type UsageReports } from './services/usage-report.js';
import type { RouteTableSource } from './route-table/types.js';
import type { InvalidationBus } from './store/invalidation.js';
import type { GatewayStore } from './store/store.js';

export type QuotaParts = Readonly<{
  plans: OrganizationPlans;
  keeper: QuotaKeeper;
  quota: QuotaGate;
  usage: UsageRecorder;
  /** GET /auth/usage and the admin API's usage. */
  reports: UsageReports;
  /** Gives back held quota and writes the last usage counts (before the store closes). */
  close(): Promise<void>;
}>;

export async function buildQuotaParts(deps: {
  store: GatewayStore;
  bus: InvalidationBus;
  now: () => number;
  logger: Logger;
  metrics: Metrics;
  routes: RouteTableSource;
  /** How often usage counts are written (USAGE_FLUSH_MS); tests may change it. */
  usageFlushMs?: number;
}): Promise<QuotaParts> {
  const { store, bus, now, logger, metrics } = deps;
  const plans = await createOrganizationPlans({ store, bus, logger, onFallback: (plan) => metrics.planFallbacks.inc({ plan }) });
  const keeper = createQuotaKeeper({ store, now, onLease: (outcome) => metrics.quotaLeases.inc({ outcome }) });
  const quota = createQuotaGate({ keeper, planOf: plans.planOf, onRefused: (plan) => metrics.quotaRefusals.inc({ plan }) });
  const usage = createUsageRecorder({ store, now, logger, flushIntervalMs: deps.usageFlushMs, onDropped: (requests) => metrics.usageDropped.inc(requests) });
  const reports = createUsageReports({ store, routes: deps.routes, planOf: plans.planOf, now });
  return {
    plans,
    reports,
    keeper,
    quota,
    usage,
    async close() {
      plans.close();
      await keeper.close();
      await usage.close();
    },
  };
}
