/**
 * The usage figures as GET /auth/usage and GET /admin/organizations/:id/usage answer them (issue
 * 47): a range of hours or days of one organization (or one of its keys), by outcome, and this
 * period's quota used and left under its plan. Every bad query is a 400 problem (1200).
 */
import type { KeyQuota } from '../limits/key-quotas.js';
import { periodOf } from '../limits/quota.js';
import { Problem } from '../problems.js';
import type { CompiledPlan, RouteTable, RouteTableSource } from '../route-table/types.js';
import type { ApiKeyStore } from '../store/api-keys.js';
import type { QuotaStore } from '../store/quotas.js';
import { bucketOf, stepOf, USAGE_KEPT_MS, type UsageCounts, type UsageGranularity, type UsageStore } from '../store/usage.js';

export type UsageQueryText = Readonly<Record<string, unknown>>;

export type UsageReport = Readonly<{
  granularity: UsageGranularity;
  from: string;
  to: string;
  keyId: string | null;
  buckets: readonly (Readonly<{ start: string }> & UsageCounts)[];
  /** This period's quota under the organization's plan; null without one. */
  quota: Readonly<{ plan: string; requests: number; per: 'day' | 'month'; periodStart: string; periodEnd: string; used: number; left: number }> | null;
  /** With keyId: the key's own quota this period (counted in the plan's period), used and left; null without one. */
  keyQuota: Readonly<{ requests: number; per: 'day' | 'month'; used: number; left: number }> | null;
}>;

export type UsageReports = Readonly<{ report(orgId: string, query: UsageQueryText): Promise<UsageReport> }>;

const QUERY_NAMES = new Set(['from', 'to', 'granularity', 'keyId']);
/** The default ranges: the last 30 days, the last 24 hours. */
const DEFAULT_BUCKETS: Readonly<Record<UsageGranularity, number>> = { day: 30, hour: 24 };

const bad = (detail: string) => new Problem('badRequest', detail, 'invalid_usage_query');

function timeOf(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z)?$/.test(value)) throw bad(`${name} must be a UTC date (2026-12-07) or time (2026-12-07T10:00:00Z).`);
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw bad(`${name} is no date.`);
  return at;
}

export function createUsageReports(deps: {
  store: Pick<UsageStore, 'readUsage'> & Pick<QuotaStore, 'readQuotaUsed'> & Pick<ApiKeyStore, 'findApiKeySummary'>;
  routes: RouteTableSource;
  planOf: (orgId: string, table: RouteTable) => CompiledPlan | undefined;
  /** An API key's own quota (limits/key-quotas.ts). */
  keyQuotaOf?: (keyId: string) => KeyQuota | undefined;
  now: () => number;
}): UsageReports {
  return {
    async report(orgId, query) {
      for (const name of Object.keys(query)) if (!QUERY_NAMES.has(name)) throw bad(`Unknown query parameter ${name}; known: from, to, granularity, keyId.`);
      const granularity = query['granularity'] ?? 'day';
      if (granularity !== 'day' && granularity !== 'hour') throw bad('granularity must be hour or day.');
      const now = deps.now();
      const step = stepOf(granularity);
      const to = bucketOf(timeOf(query['to'], 'to') ?? now, granularity);
      const from = bucketOf(timeOf(query['from'], 'from') ?? to - (DEFAULT_BUCKETS[granularity] - 1) * step, granularity);
      if (from > to) throw bad('from must not be after to.');
      if (from < bucketOf(now, granularity) - USAGE_KEPT_MS[granularity] + step) throw bad(`${granularity === 'day' ? 'Days are kept 90 days' : 'Hours are kept 7 days'}: from is older.`);
      if (to > bucketOf(now, granularity)) throw bad('to is in the future.');
      const keyId = query['keyId'];
      if (keyId !== undefined && (typeof keyId !== 'string' || keyId.length === 0 || keyId.length > 64)) throw bad('keyId must be one of the organization\'s API key ids.');
      if (keyId !== undefined && (await deps.store.findApiKeySummary(orgId, keyId)) === undefined) throw bad('keyId is not one of this organization\'s API keys.');

      const buckets = await deps.store.readUsage({ orgId, granularity, from, to, ...(keyId !== undefined && { keyId }) });
      const plan = deps.planOf(orgId, deps.routes.current());
      let quota: UsageReport['quota'] = null;
      let keyQuota: UsageReport['keyQuota'] = null;
      if (plan?.quota !== undefined) {
        const period = periodOf(now, plan.quota.per);
        const used = Math.min(plan.quota.requests, await deps.store.readQuotaUsed(orgId, period.name, null));
        quota = { plan: plan.name, ...plan.quota, periodStart: new Date(period.startsAt).toISOString(), periodEnd: new Date(period.endsAt).toISOString(), used, left: plan.quota.requests - used };
        const own = keyId === undefined ? undefined : deps.keyQuotaOf?.(keyId);
        if (keyId !== undefined && own !== undefined) {
          const keyUsed = Math.min(own.requests, await deps.store.readQuotaUsed(orgId, period.name, keyId));
          keyQuota = { requests: own.requests, per: own.per, used: keyUsed, left: own.requests - keyUsed };
        }
      }
      return {
        granularity,
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        keyId: keyId ?? null,
        buckets: buckets.map(({ start, counts }) => ({ start: new Date(start).toISOString(), ...counts })),
        quota,
        keyQuota,
      };
    },
  };
}
