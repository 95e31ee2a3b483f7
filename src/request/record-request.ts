import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthDecision } from '../credentials/decisions.js';
import type { Principal } from '../credentials/principal.js';
import type { AccessLog } from '../observability/access-log.js';
import type { Metrics } from '../observability/metrics.js';
import type { RouteTableSource } from '../route-table/types.js';
import type { CounterSeries, HistogramSeries } from '../observability/series-metrics.js';
import { traceIdsOf, type Tracing } from '../tracing/tracing.js';
import { pathOf } from './path-guard.js';

type RequestSeries = { requests: CounterSeries; duration: HistogramSeries };

/**
 * onResponse: the request metrics (by route template, never the raw path; for a forwarded
 * request also the upstream's time, measured to the end of the answer to the client, which
 * streams the upstream's body) and the one access-log line, with who it was for but never the
 * credential itself.
 *
 * It runs for every request, so it does no more than it must: the metric series of each
 * (route, method, status) are bound once and found again without building a key. With tracing
 * on it also ends the request's span (tracing/tracing.ts), with the same route, status and decision.
 */
export function recordRequest(metrics: Metrics, accessLog: AccessLog, routes?: RouteTableSource, tracing?: Tracing) {
  const series = new Map<string, Map<string, Map<number, RequestSeries>>>();
  const seriesOf = (route: string, method: string, status: number): RequestSeries => {
    let byMethod = series.get(route);
    if (byMethod === undefined) series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let found = byStatus.get(status);
    if (found === undefined) {
      const labels = { method, route, status_code: status };
      found = { requests: metrics.httpRequests.bound(labels), duration: metrics.httpDuration.bound(labels) };
      byStatus.set(status, found);
    }
    return found;
  };
  const upstreamSeries = new Map<string, HistogramSeries>();
  const upstreamSeriesOf = (route: string) => {
    let found = upstreamSeries.get(route);
    if (found === undefined) upstreamSeries.set(route, (found = metrics.upstreamDuration.bound({ route })));
    return found;
  };

  const record: RecordAnswer = (reqId, method, route, status, elapsedMs, upstreamStartedAt, principal, decision, raw) => {
    const metric = seriesOf(route, method, status);
    // Read before finish(), which forgets the request's span.
    const trace = traceIdsOf(tracing, raw);
    const credentialKind = principal?.via ?? decision?.kind;
    const authReason = decision?.outcome === 'allowed' ? undefined : decision?.reason;
    if (tracing !== undefined) tracing.finish(raw, { route, status, credentialKind, reason: decision?.reason, orgId: principal?.orgId });
    metric.requests.inc();
    metric.duration.observe(elapsedMs / 1000);
    if (upstreamStartedAt > 0) upstreamSeriesOf(route).observe((performance.now() - upstreamStartedAt) / 1000);
    accessLog({
      reqId,
      method,
      route,
      status,
      durationMs: Math.round(elapsedMs * 1000) / 1000,
      orgId: principal?.orgId,
      credentialKind,
      keyId: principal?.via === 'api_key' ? principal.credentialId : undefined,
      authReason,
      traceId: trace?.traceId,
      spanId: trace?.spanId,
    });
  };
  /**
   * The label of a request: its route's template. On the catch-all (proxy/forward.ts), the route of
   * the table it matched; one refused before it was matched (User-Agent, load shedding) is labelled
   * by the route the table would have given it, as the router once did.
   */
  const labelOf = (request: FastifyRequest): string => {
    // (A request the router could not decode has no decorations at all: undefined, not null.)
    const matched = request.forwardedRoute;
    if (matched != null) return matched.label;
    const config = request.routeOptions.config;
    if (config.auth !== 'route-table' || routes === undefined) return config.routeLabel ?? 'unmatched';
    const route = routes.current().match(pathOf(request.raw.url ?? ''));
    return route !== undefined && route.methods.has(request.method) ? route.label : 'unmatched';
  };
  const onResponse = function onResponse(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    record(request.id, request.method, labelOf(request), reply.statusCode, reply.elapsedTime, request.upstreamStartedAt, request.principal, request.authDecision, request.raw);
    done();
  };
  return Object.assign(onResponse, { record });
}

/** The same record for an answer given outside fastify (proxy/fast-path.ts). */
export type RecordAnswer = (
  reqId: string,
  method: string,
  route: string,
  status: number,
  elapsedMs: number,
  upstreamStartedAt: number,
  principal: Principal | null,
  decision: AuthDecision | null,
  /** The request itself: its trace (tracing/), never read for anything else. */
  raw: IncomingMessage,
) => void;
