import { readFileSync } from 'node:fs';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CacheStats } from '../credentials/cache.js';
import type { AuthDecision } from '../credentials/decisions.js';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';

/**
 * Every metric, defined once on the gateway's own Registry (never prom-client's global one, so
 * two gateways can live in one process). Labels are bounded: route templates, never raw paths;
 * reasons from a closed list (credentials/decisions.ts); never a secret, e-mail or organization name.
 */
export type Metrics = ReturnType<typeof createMetrics>;

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(environment: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ environment });
  collectDefaultMetrics({ register: registry });

  const metrics = {
    registry,
    // Updated on every request: series counters and histograms (series-metrics.ts), whose series are bound
    // once and then cost an addition, where prom-client's hash and validate the labels each time.
    httpRequests: new SeriesCounter({
      name: 'authgate_http_requests_total',
      help: 'Requests answered on the public port, by method, route template and status code.',
      labelNames: ['method', 'route', 'status_code'] as const,
      registry,
    }),
    fastLaneRequests: new SeriesCounter({
      name: 'authgate_fast_lane_requests_total',
      help: 'Forwarded requests that took the fast lane (no refusal, no wait: straight from the server to the upstream), by route template; the rest of authgate_http_requests_total went through the framework.',
      labelNames: ['route'] as const,
      registry,
    }),
    httpDuration: new SeriesHistogram({
      name: 'authgate_http_request_duration_seconds',
      help: 'Time from request to response on the public port.',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: LATENCY_BUCKETS,
      registry,
    }),
    authDecisions: new SeriesCounter<'kind' | 'outcome' | 'reason', AuthDecision>({
      name: 'authgate_auth_decisions_total',
      help: 'Credential checks by credential kind, outcome and bounded reason.',
      labelNames: ['kind', 'outcome', 'reason'] as const,
      registry,
    }),
    // The edge proxies' authorization port (edge-authz/, issue 30): one per decision, beside authDecisions.
    authzDecisions: new SeriesCounter({
      name: 'authgate_authz_decisions_total',
      help: "Decisions answered to edge proxies, by protocol (auth_request, forward_auth, ext_authz_http, ext_authz_grpc), outcome (allowed, denied, error) and the route template decided ('unmatched' when none).",
      labelNames: ['protocol', 'outcome', 'route'] as const,
      registry,
    }),
    upstreamDuration: new SeriesHistogram({
      name: 'authgate_upstream_request_duration_seconds',
      help: 'Time of forwarded requests, from the gateway to the end of the upstream answer.',
      labelNames: ['route'] as const,
      buckets: LATENCY_BUCKETS,
      registry,
    }),
    // Trusted issuers (issue 49, src/issuers/): the `issuer` label is a name the routes file declares.
    issuerKeyFetches: new Counter({
      name: 'authgate_issuer_key_fetches_total',
      help: "Fetches of a trusted issuer's key set (discovery included), by issuer and result (ok, error, invalid).",
      labelNames: ['issuer', 'result'] as const,
      registers: [registry],
    }),
    issuerKeys: new Gauge({
      name: 'authgate_issuer_keys',
      help: "Keys held of a trusted issuer's key set (0 until its first fetch succeeds).",
      labelNames: ['issuer'] as const,
      registers: [registry],
    }),
    issuerTokenRefusals: new Counter({
      name: 'authgate_issuer_token_refusals_total',
      help: 'Provider tokens refused, by issuer and reason (signature, algorithm, issuer, audience, expired, not_yet_valid, type, claims, no_organization, unknown_organization, keys_unavailable, inactive, introspection_unavailable).',
      labelNames: ['issuer', 'reason'] as const,
      registers: [registry],
    }),
    issuerIntrospections: new Counter({
      name: 'authgate_issuer_introspections_total',
      help: "Calls to a trusted issuer's introspection endpoint (RFC 7662), by issuer and result (active, inactive, error, timeout, invalid).",
      labelNames: ['issuer', 'result'] as const,
      registers: [registry],
    }),
    upstreamErrors: new Counter({
      name: 'authgate_upstream_errors_total',
      help: 'Forwarded requests that got no answer from the upstream, by route, kind and upstream (the routes file\'s name: `default` without one).',
      labelNames: ['route', 'kind', 'upstream'] as const,
      registers: [registry],
    }),
    storeUp: new Gauge({
      name: 'authgate_store_up',
      help: '1 when the credential store answers its health ping, else 0.',
      registers: [registry],
    }),
    storeErrors: new SeriesCounter({
      name: 'authgate_store_errors_total',
      help: 'Store calls that failed as unavailable, by operation.',
      labelNames: ['operation'] as const,
      registry,
    }),
    // Timed on every store call: with the cache off (or cold), on every request.
    storeDuration: new SeriesHistogram({
      name: 'authgate_store_command_duration_seconds',
      help: 'Duration of store calls, by operation.',
      labelNames: ['operation'] as const,
      buckets: LATENCY_BUCKETS,
      registry,
    }),
    invalidationsSent: new Counter({
      name: 'authgate_invalidations_sent_total',
      help: 'Revoked credentials published to the other replicas.',
      registers: [registry],
    }),
    auditWriteFailures: new Counter({
      name: 'authgate_audit_write_failures_total',
      help: 'Audit events the store did not take (the request went on; the log line was written).',
      registers: [registry],
    }),
    notices: new Counter({
      name: 'authgate_notices_total',
      help: 'Security notices to AUTHGATE_NOTIFY_WEBHOOK_URL, by outcome: delivered, retried (an attempt failed and another follows), failed (given up: out of attempts, refused, or undelivered at shutdown) or dropped (the queue was full).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    revocationPropagation: new Histogram({
      name: 'authgate_revocation_propagation_seconds',
      help: "Time from another replica's announcement of a revocation to this replica dropping the credential from its cache (clocks of two hosts: keep them in NTP).",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    adminRefusals: new Counter({
      name: 'authgate_admin_refusals_total',
      help: 'Admin requests refused on the ops port, by reason: bad_admin_token, a malformed or missing credential (missing, malformed, not_bearer, duplicate), or throttled (429: too many refusals from the address).',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    rateLimitRefusals: new Counter({
      name: 'authgate_rate_limit_refusals_total',
      help: 'Forwarded requests refused with 429 because their credential reached its rate limit.',
      registers: [registry],
    }),
    rateLimitLeases: new Counter({
      name: 'authgate_rate_limit_leases_total',
      help: 'Rate-limit budget asked of the store, by outcome: granted, exhausted (the window had nothing left) or store_unavailable (this replica fell back to its local share).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    tracingSpansDropped: new Counter({
      name: 'authgate_tracing_spans_dropped_total',
      help: 'Spans never exported (AUTHGATE_TRACING=on), by reason: queue_full (the bounded export queue was full) or export_failed (the collector did not take them). A request never waits on export.',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    invalidationsReceived: new Counter({
      name: 'authgate_invalidations_received_total',
      help: 'Revocations received, by kind (credential, rate_limits for a change of the rate-limit overrides, profile for a change of an organization\'s name or e-mail, plan for a change of an organization\'s plan, key_quota for a change of a key\'s own quota, or all after a resubscribe).',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    quotaRefusals: new Counter({
      name: 'authgate_quota_refusals_total',
      help: 'Forwarded requests refused with 429 because their organization\'s quota for the period was spent, by the organization\'s plan (a name the routes file declares: bounded; never the organization).',
      labelNames: ['plan'] as const,
      registers: [registry],
    }),
    quotaLeases: new Counter({
      name: 'authgate_quota_leases_total',
      help: 'Quota asked of the store, by outcome: granted, exhausted (the period had not enough left) or store_unavailable (the request was refused with 503).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    usageDropped: new Counter({
      name: 'authgate_usage_dropped_total',
      help: 'Requests left out of the usage figures because this replica\'s unwritten counts were at their bound (the store was unreachable for long).',
      registers: [registry],
    }),
    planFallbacks: new Counter({
      name: 'authgate_plan_fallbacks_total',
      help: 'Decisions made under the routes file\'s defaultPlan because the organization\'s own plan is no longer in the file, by that plan (its name, once set by an operator: bounded).',
      labelNames: ['plan'] as const,
      registers: [registry],
    }),
  };
  registerBuildInfo(registry);
  return metrics;
}

/** What `npm run build` wrote (scripts/build-info.mjs); from dist/observability/ and src/observability/ alike. */
const BUILD_INFO = new URL('../../dist/build-info.json', import.meta.url);

export function readBuildInfo(): { version: string; commit: string } {
  try {
    const info = JSON.parse(readFileSync(BUILD_INFO, 'utf8')) as { version?: unknown; commit?: unknown };
    return { version: typeof info.version === 'string' ? info.version : 'unknown', commit: typeof info.commit === 'string' ? info.commit : 'unknown' };
  } catch {
    return { version: 'unknown', commit: 'unknown' };
  }
}

/** authgate_build_info{version, commit, node} 1: which build each replica runs (a rollout shows as two series). */
function registerBuildInfo(registry: Registry): void {
  const { version, commit } = readBuildInfo();
  new Gauge({
    name: 'authgate_build_info',
    help: 'Always 1: the version and commit of the running build and the Node version running it.',
    labelNames: ['version', 'commit', 'node'] as const,
    registers: [registry],
  }).set({ version, commit, node: process.version }, 1);
}

/** 1 while this replica's revocation channel is confirmed (its cache is trusted), read at scrape time. */
export function registerSubscriptionMetric(metrics: Metrics, subscribed: () => boolean): void {
  new Gauge({
    name: 'authgate_invalidation_subscribed',
    help: '1 while revocations from other replicas reach this one (subscription confirmed) and the credential cache is used; 0 while every credential is read from the store.',
    registers: [metrics.registry],
    collect() {
      this.set(subscribed() ? 1 : 0);
    },
  });
}

/** 1 while GET /openapi.json describes the live route table (proxy/forwarded-docs.ts), read at scrape time. */
export function registerOpenApiMetric(metrics: Metrics, documented: () => boolean): void {
  new Gauge({
    name: 'authgate_openapi_documented',
    help: "1 while the public OpenAPI document (GET /openapi.json) describes the live route table's routes; 0 while the table in use could not be documented (the routes.openapi_failed log line says why; the document then lists only the gateway's own routes).",
    registers: [metrics.registry],
    collect() {
      this.set(documented() ? 1 : 0);
    },
  });
}

/** Cache numbers are read at scrape time, so a cache hit costs no metric update. */
export function registerCacheMetrics(metrics: Metrics, cache: { stats: Readonly<CacheStats>; size(): number; unknownSize(): number }): void {
  const { registry } = metrics;
  const counter = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  counter('authgate_credential_cache_hits_total', 'Credential lookups answered by the in-process cache.', () => cache.stats.hits);
  counter('authgate_credential_cache_misses_total', 'Credential lookups that went to the store.', () => cache.stats.misses);
  counter('authgate_credential_cache_evictions_total', 'Cache entries evicted to stay within AUTHGATE_CACHE_MAX.', () => cache.stats.evictions);
  new Gauge({
    name: 'authgate_credential_cache_entries',
    help: 'Credentials in the in-process cache.',
    registers: [registry],
    collect() {
      this.set(cache.size());
    },
  });
  new Gauge({
    name: 'authgate_credential_cache_unknown_entries',
    help: 'Unknown credentials remembered as unknown now (within authgate_credential_cache_entries; at most AUTHGATE_NEGATIVE_CACHE_MAX).',
    registers: [registry],
    collect() {
      this.set(cache.unknownSize());
    },
  });
}
