// What the composition root (gateway.ts) builds for plans' quotas and usage figures (issue 47):
// the quota keeper and its gate, the usage recorder and its reports. Apart so gateway.ts stays the wiring.
import { createQuotaGate, type QuotaGate } from './limits/quota-check.js';
import { createQuotaKeeper, type QuotaKeeper } from './limits/quota.js';
import type { Logger } from './observability/logging.js';
import type { Metrics } from './observability/metrics.js';
import type { OrganizationPlans } from './plans/organization-plans.js';
import { createUsageRecorder, type UsageRecorder } from './services/usage-recorder.js';
import { createUsageReports, type UsageReports } from './services/usage-report.js';
import type { RouteTableSource } from './route-table/types.js';
import type { GatewayStore } from './store/store.js';

export type QuotaParts = Readonly<{
  keeper: QuotaKeeper;
  quota: QuotaGate;
  usage: UsageRecorder;
  /** GET /auth/usage and the admin API's usage. */
  reports: UsageReports;
  /** Gives back held quota and writes the last usage counts (before the store closes). */
  close(): Promise<void>;
}>;

export function buildQuotaParts(deps: {
  store: GatewayStore;
  now: () => number;
  logger: Logger;
  metrics: Metrics;
  routes: RouteTableSource;
  /** The organizations' plans as this replica keeps them (plans/organization-plans.ts). */
  plans: Pick<OrganizationPlans, 'planOf'>;
  /** How often usage counts are written (USAGE_FLUSH_MS); tests may change it. */
  usageFlushMs?: number;
}): QuotaParts {
  const { store, now, logger, metrics, plans } = deps;
  const keeper = createQuotaKeeper({ store, now, onLease: (outcome) => metrics.quotaLeases.inc({ outcome }) });
  const quota = createQuotaGate({ keeper, planOf: plans.planOf, onRefused: (plan) => metrics.quotaRefusals.inc({ plan }) });
  const usage = createUsageRecorder({ store, now, logger, flushIntervalMs: deps.usageFlushMs, onDropped: (requests) => metrics.usageDropped.inc(requests) });
  const reports = createUsageReports({ store, routes: deps.routes, planOf: plans.planOf, now });
  return {
    reports,
    keeper,
    quota,
    usage,
    async close() {
      await keeper.close();
      await usage.close();
    },
  };
}
