// What the composition root (gateway.ts) builds for plans' quotas and usage figures (issue 47):
// the quota keeper and its gate, keys' own quotas, the usage recorder and its reports. Apart so gateway.ts stays the wiring.
import { createKeyQuotas, type KeyQuotas } from './limits/key-quotas.js';
import { createQuotaGate, type QuotaGate } from './limits/quota-check.js';
import { createQuotaKeeper, type QuotaKeeper } from './limits/quota.js';
import type { Logger } from './observability/logging.js';
import type { Metrics } from './observability/metrics.js';
import type { OrganizationPlans } from './plans/organization-plans.js';
import { createUsageRecorder, type UsageRecorder } from './services/usage-recorder.js';
import { createUsageReports, type UsageReports } from './services/usage-report.js';
import type { RouteTableSource } from './route-table/types.js';
import type { InvalidationBus } from './store/invalidation.js';
import type { GatewayStore } from './store/store.js';

export type QuotaParts = Readonly<{
  keeper: QuotaKeeper;
  quota: QuotaGate;
  /** API keys' own quotas, in memory (read again when announced). */
  keyQuotas: KeyQuotas;
  usage: UsageRecorder;
  /** GET /auth/usage and the admin API's usage. */
  reports: UsageReports;
  /** Gives back held quota and writes the last usage counts (before the store closes). */
  close(): Promise<void>;
}>;

export async function buildQuotaParts(deps: {
  store: GatewayStore;
  bus: Pick<InvalidationBus, 'onInvalidation'>;
  now: () => number;
  logger: Logger;
  metrics: Metrics;
  routes: RouteTableSource;
  /** The organizations' plans as this replica keeps them (plans/organization-plans.ts). */
  plans: Pick<OrganizationPlans, 'planOf'>;
  /** How often usage counts are written (USAGE_FLUSH_MS); tests may change it. */
  usageFlushMs?: number;
}): Promise<QuotaParts> {
  const { store, now, logger, metrics, plans } = deps;
  const keeper = createQuotaKeeper({ store, now, onLease: (outcome) => metrics.quotaLeases.inc({ outcome }) });
  const keyQuotas = await createKeyQuotas({ store, bus: deps.bus, logger });
  const quota = createQuotaGate({ keeper, planOf: plans.planOf, onRefused: (plan) => metrics.quotaRefusals.inc({ plan }), keyQuotaOf: keyQuotas.quotaOf });
  const usage = createUsageRecorder({ store, now, logger, flushIntervalMs: deps.usageFlushMs, onDropped: (requests) => metrics.usageDropped.inc(requests) });
  const reports = createUsageReports({ store, routes: deps.routes, planOf: plans.planOf, keyQuotaOf: keyQuotas.quotaOf, now });
  return {
    reports,
    keeper,
    quota,
    keyQuotas,
    usage,
    async close() {
      keyQuotas.close();
      await keeper.close();
      await usage.close();
    },
  };
}
