import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../observability/logging.js';
import type { CounterSeries, HistogramSeries, Metrics } from '../observability/metrics.js';

/**
 * onResponse: the request metrics (by route template, never the raw path; for a forwarded
 * request also the upstream's time, measured to the end of the answer to the client, which
 * streams the upstream's body) and the one log line, with who it was for but never the
 * credential itself.
 *
 * It runs for every request, so it does no more than it must: the metric series of each
 * (method, route, status) are bound once, and the line goes through one logger made once.
 * That logger skips the redaction pass: every field of this line is set here, from values the
 * gateway computed itself (a route template, a status, ids, a bounded reason), so there is
 * nothing for redaction to find — keep it that way when adding a field. Every other log line
 * (request.log, errors) is still redacted.
 */
export function recordRequest(metrics: Metrics, logger: Logger) {
  const requestLog = logger.child({}, { redact: [] });
  const series = new Map<string, { requests: CounterSeries; duration: HistogramSeries }>();
  const seriesOf = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let found = series.get(key);
    if (found === undefined) {
      const labels = { method, route, status_code: status };
      found = { requests: metrics.httpRequests.bound(labels), duration: metrics.httpDuration.bound(labels) };
      series.set(key, found);
    }
    return found;
  };
  const upstreamSeries = new Map<string, HistogramSeries>();
  const upstreamSeriesOf = (route: string) => {
    let found = upstreamSeries.get(route);
    if (found === undefined) upstreamSeries.set(route, (found = metrics.upstreamDuration.bound({ route })));
    return found;
  };

  return function onResponse(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    const route = request.routeOptions.config.routeLabel ?? 'unmatched';
    const status = reply.statusCode;
    const elapsedMs = reply.elapsedTime;
    const metric = seriesOf(request.method, route, status);
    metric.requests.inc();
    metric.duration.observe(elapsedMs / 1000);
    if (request.upstreamStartedAt > 0) upstreamSeriesOf(route).observe((performance.now() - request.upstreamStartedAt) / 1000);
    if (requestLog.isLevelEnabled('info')) {
      const principal = request.principal;
      const decision = request.authDecision;
      requestLog.info(
        {
          reqId: request.id,
          method: request.method,
          route,
          status,
          durationMs: Math.round(elapsedMs * 1000) / 1000,
          orgId: principal?.orgId,
          credentialKind: principal?.via ?? decision?.kind,
          keyId: principal?.via === 'api_key' ? principal.credentialId : undefined,
          authReason: decision?.outcome === 'allowed' ? undefined : decision?.reason,
        },
        'request',
      );
    }
    done();
  };
}
