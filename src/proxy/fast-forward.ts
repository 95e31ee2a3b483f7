/**
 * The fast lane's second half (proxy/fast-path.ts decides; this sends): a request it has taken,
 * nothing refusing it, goes from node:http straight to its route's upstream through that
 * upstream's undici Pool; a body streams from the client's socket to the upstream's, and the
 * answer back, each with backpressure. The headers, the problems of a failed upstream, the
 * metrics and the access line are the framework's path's, by calling the same functions.
 */
import type { CompiledPlan } from '../route-table/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ALLOWED, type DecisionRecorder } from '../credentials/decisions.js';
import type { Principal } from '../credentials/principal.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../request/error-handler.js';
import type { RecordAnswer } from '../request/record-request.js';
import { requestIdOf } from '../request/request-id.js';
import { rateLimitHeader } from '../limits/enforce.js';
import type { RateVerdict } from '../limits/limiter.js';
import type { Metrics } from '../observability/metrics.js';
import type { CounterSeries } from '../observability/series-metrics.js';
import type { CompiledRoute, RouteTable } from '../route-table/types.js';
import type { Tracing } from '../tracing/tracing.js';
import { withQuotaHeaders } from '../limits/quota-check.js';
import type { QuotaVerdict } from '../limits/quota.js';
import type { UsageNote } from '../services/usage-recorder.js';
import { upstreamAnswerHeaders } from './answer-headers.js';
import { rewriteIdentityHeaders, type ForwardedInfo, type OutgoingHeaders } from './identity-headers.js';
import { upstreamProblem } from './upstream-errors.js';
import type { UpstreamPools } from './upstream-pools.js';

/** A route of a table as the lane reads it: the route, and what is bound once for it. */
export type Lane = Readonly<{ route: CompiledRoute; table: RouteTable; taken: CounterSeries }>;

/** What the lane has decided for a request it takes. */
export type Taken = Readonly<{
  lane: Lane;
  method: string;
  url: string;
  hasBody: boolean;
  /** null on a public route. */
  principal: Principal | null;
  assertion: string | null;
  /** The credential's rate limit's verdict, when it has one: its headers go on the answer. */
  verdict: RateVerdict | undefined;
  /** The plan's quota's verdict, when one applies: its members go on the same headers. */
  quota?: QuotaVerdict | undefined;
  startedAt: number;
  /** The organization's plan under the lane's table (undefined: none, or a public route). */
  plan: CompiledPlan | undefined;
}>;

/**
 * Why an upstream request is aborted when its client went. One object for all: an Error made per
 * request captured a stack trace each time, about 6 µs, more than the rest of the lane's own work.
 */
const CLIENT_CLOSED = new Error('client closed the connection');

export function createLaneSender(deps: {
  pools: UpstreamPools;
  forwardedInfo: (request: IncomingMessage) => ForwardedInfo;
  environment: string;
  hsts: string | undefined;
  varyOrigin: boolean;
  recordDecision: DecisionRecorder;
  noteKeyUse: (principal: Principal) => void;
  noteUsage: UsageNote;
  metrics: Metrics;
  record: RecordAnswer;
  /** AUTHGATE_TRACING=on: the upstream call's client span, its context in the upstream's traceparent. */
  tracing: Tracing | undefined;
}): (request: IncomingMessage, response: ServerResponse, taken: Taken) => void {
  const varyOrigin = deps.varyOrigin;
  const tracing = deps.tracing;
  return function send(request, response, { lane, method, url, hasBody, principal, assertion, verdict, quota, startedAt, plan }) {
    const headers = request.headers;
    const route = lane.route;
    const upstream = route.upstream;
    lane.taken.inc();
    const decision = principal === null ? null : ALLOWED[principal.via];
    if (principal !== null) {
      deps.recordDecision(principal.via, 'allowed', 'ok');
      if (principal.via === 'api_key') deps.noteKeyUse(principal);
      deps.noteUsage(principal, 'admitted');
    }
    const requestId = requestIdOf(request);
    const answerHeaders: OutgoingHeaders = { 'x-request-id': requestId, 'x-authgate-environment': deps.environment };
    if (deps.hsts !== undefined) answerHeaders['strict-transport-security'] = deps.hsts;
    if (verdict !== undefined) {
      answerHeaders['ratelimit-policy'] = verdict.limit.policyHeader;
      answerHeaders['ratelimit'] = rateLimitHeader(verdict);
    }
    if (quota !== undefined) withQuotaHeaders(answerHeaders as Record<string, string | undefined>, quota);
    let upstreamStartedAt = 0;
    let status = 0;
    // The client gone before the answer is whole: the upstream request goes too, whenever it
    // went (before the request was on its way, while its answer streams, while waiting for drain).
    // Then, gone or done, the request is counted and logged. One listener for both: each one
    // added and removed per request is work on the hot path.
    let controller: Dispatcher.DispatchController | undefined;
    let clientGone = false;
    response.once('close', () => {
      if (!response.writableFinished) {
        clientGone = true;
        controller?.abort(CLIENT_CLOSED);
      }
      deps.record(requestId, method, route.label, status || response.statusCode, performance.now() - startedAt, upstreamStartedAt, principal, decision, request);
    });

    const outgoing = rewriteIdentityHeaders(withoutConnectionNamed(headers), principal, requestId, deps.forwardedInfo(request), assertion, lane.table.scopes, plan);
    outgoing['host'] = upstream.host;
    if (tracing !== undefined) tracing.upstream(request, outgoing, upstream.host);
    const fail = (error: Error & { code?: string }) => {
      // The abort above (the client went, its body cut short or not): nobody is waiting for an answer.
      if (clientGone) return;
      const problem = upstreamProblem(error);
      deps.metrics.upstreamErrors.inc({ route: route.label, kind: problem.reason ?? 'unknown', upstream: upstream.name });
      if (response.headersSent) {
        response.destroy(error);
        return;
      }
      const payload = problemBody(problem.problem, problem.detail);
      const body = JSON.stringify(payload);
      status = payload.status;
      response.writeHead(status, {
        ...answerHeaders,
        ...(varyOrigin && { vary: 'Origin' }),
        'content-type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
        'cache-control': 'no-store',
        'content-length': Buffer.byteLength(body),
      });
      response.end(method === 'HEAD' ? undefined : body);
    };

    upstreamStartedAt = performance.now();
    deps.pools.poolOf(upstream).dispatch(
      {
        path: upstream.basePath + url,
        method: method as Dispatcher.HttpMethod,
        headers: outgoing as Record<string, string>,
        body: hasBody ? request : null,
        // The upstream's own timeouts (its origin's pool may serve several upstreams).
        headersTimeout: upstream.timeoutMs,
        bodyTimeout: upstream.timeoutMs,
      },
      {
        onRequestStart(c) {
          controller = c;
          if (clientGone) c.abort(CLIENT_CLOSED);
        },
        onResponseStart(_c, statusCode, upstreamHeaders) {
          status = statusCode;
          if (clientGone) return;
          // The same answer headers as the framework's path: cache headers private to the credential, Vary with Origin under CORS.
          const forwarded = upstreamAnswerHeaders(upstreamHeaders as OutgoingHeaders, verdict !== undefined || quota !== undefined, varyOrigin);
          for (const name in answerHeaders) forwarded[name] = answerHeaders[name];
          response.writeHead(statusCode, forwarded as Record<string, string | string[]>);
        },
        onResponseData(c, chunk) {
          if (clientGone) return;
          // Backpressure: the upstream waits while the client's socket is full.
          if (!response.write(chunk)) {
            c.pause();
            response.once('drain', () => c.resume());
          }
        },
        onResponseEnd() {
          if (!clientGone) response.end();
        },
        onResponseError(_c, error) {
          fail(error as Error & { code?: string });
        },
      },
    );
  };
}

/**
 * The client's headers without those its `Connection` names (rewriteIdentityHeaders drops
 * `Connection` itself): nearly always none (`keep-alive`, `close`), and then no copy is made.
 */
function withoutConnectionNamed(headers: IncomingMessage['headers']): IncomingMessage['headers'] {
  const connection = headers.connection;
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return headers;
  const named = new Set(connection.split(',').map((name) => name.trim().toLowerCase()));
  const out: IncomingMessage['headers'] = {};
  for (const name in headers) if (!named.has(name)) out[name] = headers[name];
  return out;
}
