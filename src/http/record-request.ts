import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../observability/metrics.js';

/**
 * onResponse: the request metric (by route template, never the raw path) and the one log
 * line, with who it was for but never the credential itself.
 */
export function recordRequest(metrics: Metrics) {
  return function onResponse(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    const route = request.routeOptions.config.routeLabel ?? 'unmatched';
    const status = reply.statusCode;
    const seconds = reply.elapsedTime / 1000;
    const labels = { method: request.method, route, status_code: status };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, seconds);
    const principal = request.principal;
    request.log.info(
      {
        method: request.method,
        route,
        status,
        durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
        orgId: principal?.orgId,
        credentialKind: principal?.via ?? request.authDecision?.kind,
        keyId: principal?.via === 'api_key' ? principal.credentialId : undefined,
        authReason: request.authDecision?.outcome === 'allowed' ? undefined : request.authDecision?.reason,
      },
      'request',
    );
    done();
  };
}
