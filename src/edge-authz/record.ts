import type { AuthDecision } from '../credentials/decisions.js';
import type { Principal } from '../credentials/principal.js';
import { newRequestId } from '../request/request-id.js';
import { accessLineParts, type AccessLineParts, type AccessLog } from '../observability/access-log.js';
import type { Metrics } from '../observability/metrics.js';
import type { CounterSeries } from '../observability/series-metrics.js';
import type { TraceIds } from '../tracing/trace-context.js';
import type { EdgeProtocol } from './decision.js';

/** What one answer of the authorization port was, for its metric and its access line. */
export type EdgeOutcome = Readonly<{
  protocol: EdgeProtocol;
  /** The original request's method (the one decided), or the proxy's own when none was read. */
  method: string;
  /** The matched route's label; undefined when none matched (or nothing was decided). */
  route: string | undefined;
  status: number;
  /** performance.now() when the proxy's request arrived. */
  startedAt: number;
  requestId: string | undefined;
  principal: Principal | null;
  /** The credential check's decision, when one was made. */
  authDecision: AuthDecision | undefined;
  /** A refusal made before or beside the credential check (identity_header, method_override): the access line's authReason when no decision says one. */
  refusalReason?: string | undefined;
  /** The request's trace ids, when it is part of a trace (EdgeRequest.trace). */
  trace?: TraceIds | undefined;
}>;

export type EdgeRecorder = (outcome: EdgeOutcome) => void;

const UNMATCHED = 'unmatched';
/** `protocol outcome` for each protocol and outcome, made once. */
const OUTCOME_KEYS: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.fromEntries(
  (['auth_request', 'forward_auth', 'ext_authz_http', 'ext_authz_grpc'] satisfies EdgeProtocol[]).map((p) => [p, Object.fromEntries(['allowed', 'denied', 'error'].map((o) => [o, `${p} ${o}`]))]),
);

/**
 * authgate_authz_decisions_total{protocol, outcome, route} and the access line (with `protocol`)
 * of every answer of the authorization endpoints, whichever protocol asked: allowed (200), denied
 * (any refusal of the request: 4xx) or error (5xx: the store, or a fault). The series are bound
 * once per label values, as the public port's request metrics are (request/record-request.ts).
 */
export function createEdgeRecorder(metrics: Metrics, accessLog: AccessLog): EdgeRecorder {
  // By route, then `protocol outcome`: the route's map found without building a key per answer.
  const series = new Map<string, Map<string, CounterSeries>>();
  const seriesOf = (protocol: string, outcome: string, route: string): CounterSeries => {
    let ofRoute = series.get(route);
    if (ofRoute === undefined) series.set(route, (ofRoute = new Map()));
    const key = OUTCOME_KEYS[protocol]?.[outcome] ?? `${protocol} ${outcome}`;
    let found = ofRoute.get(key);
    if (found === undefined) ofRoute.set(key, (found = metrics.authzDecisions.bound({ protocol, outcome, route })));
    return found;
  };
  /**
   * Each credential's last access-line parts (everything but time, request id and duration), for
   * the outcome they were made of: a credential's requests mostly repeat one outcome (a kept
   * allow), whose line is then not quoted field by field again (issue 30's fourth step,
   * docs/performance.md). Keyed weakly by the cached principal, as the decider's kept allows are.
   */
  const repeat = accessLog.repeated;
  const lines = new WeakMap<Principal, { protocol: string; method: string; route: string | undefined; status: number; decision: AuthDecision | undefined; parts: AccessLineParts; series: CounterSeries }>();
  const outcomeOf = (status: number) => (status === 200 ? 'allowed' : status >= 500 ? 'error' : 'denied');
  return (o) => {
    const route = o.route ?? UNMATCHED;
    const principal = o.principal;
    const decision = o.authDecision;
    if (principal !== null && o.trace === undefined && o.refusalReason === undefined && repeat !== undefined) {
      let kept = lines.get(principal);
      if (kept === undefined || kept.route !== o.route || kept.method !== o.method || kept.status !== o.status || kept.decision !== decision || kept.protocol !== o.protocol) {
        const series = seriesOf(o.protocol, outcomeOf(o.status), route);
        const parts = accessLineParts({
          method: o.method,
          route,
          status: o.status,
          orgId: principal.orgId,
          credentialKind: principal.via,
          keyId: principal.via === 'api_key' ? principal.credentialId : undefined,
          authReason: decision === undefined || decision.outcome === 'allowed' ? undefined : decision.reason,
          protocol: o.protocol,
        });
        lines.set(principal, (kept = { protocol: o.protocol, method: o.method, route: o.route, status: o.status, decision, parts, series }));
      }
      // The outcome's series, kept with its parts: found once, not by route and outcome per answer.
      kept.series.inc();
      return repeat(kept.parts, o.requestId ?? newRequestId(), Math.round((performance.now() - o.startedAt) * 1000) / 1000);
    }
    seriesOf(o.protocol, outcomeOf(o.status), route).inc();
    accessLog({
      reqId: o.requestId ?? newRequestId(),
      method: o.method,
      route,
      status: o.status,
      durationMs: Math.round((performance.now() - o.startedAt) * 1000) / 1000,
      orgId: principal?.orgId,
      credentialKind: principal?.via ?? decision?.kind,
      keyId: principal?.via === 'api_key' ? principal.credentialId : undefined,
      authReason: decision === undefined || decision.outcome === 'allowed' ? o.refusalReason : decision.reason,
      protocol: o.protocol,
      traceId: o.trace?.traceId,
      spanId: o.trace?.spanId,
    });
  };
}
