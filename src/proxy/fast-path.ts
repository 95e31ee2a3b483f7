/**
 * The forwarded routes' fast lane (issue 18): a forwarded request that meets no refusal goes from
 * node:http straight to the upstream through an undici Pool, without fastify's router, hooks,
 * request and reply objects and without @fastify/reply-from; a body streams from the client's
 * socket to the upstream's, and the answer back, each with backpressure. It runs the same
 * pipeline, by calling the same functions: the User-Agent rule, the path guard, the route table,
 * the bearer credential (resolved from the cache only), the scope, the rate limit (budget this
 * replica holds only), the identity assertion (one kept only), the identity headers, the
 * upstream's answer headers, the problems of a failed upstream, the metrics and the access line.
 *
 * It takes a request only when it can answer it without refusing it and without waiting for
 * anything but the credential's one store read (a cache miss, or the cache off) and the upstream:
 * every other request (a method the route does not forward, a GET or HEAD with a body, an
 * Expect (whose 100 Continue http/admission.ts sends on the body's first read), an Origin, a Host
 * to refuse, a missing or unknown credential, a refusal of any kind, an assertion to
 * sign, rate-limit budget to lease, load shedding, shutdown) goes to fastify as before, having had
 * nothing done or counted here but that read, whose answer fastify then uses instead of reading
 * again (credentials/settled-resolution.ts). So every refusal and every slower path keeps one
 * implementation, and this one is the happy path only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { ScopeRule } from '../authz/scopes.js';
import { BUILTIN_SCOPE_TABLE } from '../route-table/builtin.js';
import type { ForwardedRoute } from '../config/forwarded-routes.js';
import { readBearer } from '../credentials/bearer.js';
import { ALLOWED, type DecisionRecorder } from '../credentials/decisions.js';
import type { Principal } from '../credentials/principal.js';
import type { CredentialResolver, Resolution } from '../credentials/resolver.js';
import { keepSettledResolution } from '../credentials/settled-resolution.js';
import { hostProblem } from '../http/admission.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../http/error-handler.js';
import type { RecordAnswer } from '../http/record-request.js';
import { requestIdOf } from '../http/request-id.js';
import type { IdentityAsserter } from '../identity/assertion.js';
import type { RateLimiter } from '../limits/limiter.js';
import { rateLimitHeader } from '../limits/enforce.js';
import type { RateLimitPolicy } from '../limits/policy.js';
import type { Metrics } from '../observability/metrics.js';
import type { CounterSeries } from '../observability/series-metrics.js';
import { upstreamAnswerHeaders } from './forward.js';
import { rewriteIdentityHeaders, type ForwardedInfo, type OutgoingHeaders } from './identity-headers.js';
import { isAmbiguousPath } from './path-guard.js';
import { upstreamProblem } from './upstream-errors.js';

/** node:http's request handler: the lane's own answer, or fastify's (deps.framework). */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => void;

/** A route of the table as the lane reads it: the scope bit each method needs (HEAD takes GET's). */
type Lane = Readonly<{ label: string; bits: ReadonlyMap<string, ScopeRule>; loginTokenOnly: boolean; taken: CounterSeries }>;

/**
 * Why an upstream request is aborted when its client went. One object for all: an Error made per
 * request captured a stack trace each time, about 6 µs, more than the rest of the lane's own work.
 */
const CLIENT_CLOSED = new Error('client closed the connection');

/** Longer paths go the framework's way (its router bounds what a wildcard may match). */
const MAX_PATH = 200;

export function createFastPath(deps: {
  routes: readonly ForwardedRoute[];
  upstreamUrl: string;
  /** The upstream's client (proxy/upstream-pool.ts), shared with the framework's path. */
  pool: Dispatcher;
  /** X-Forwarded-* for a request (proxy/forwarded-info.ts), as the framework's path sends them. */
  forwardedInfo: (request: IncomingMessage) => ForwardedInfo;
  environment: string;
  hsts: string | undefined;
  /** AUTHGATE_CORS_ORIGINS is set: every answer varies on Origin, the lane's too (http/cors.ts). */
  varyOrigin: boolean;
  resolver: CredentialResolver;
  recordDecision: DecisionRecorder;
  noteKeyUse: (principal: Principal) => void;
  rateLimits: Readonly<{ policy: RateLimitPolicy; limiter: RateLimiter }>;
  identity: IdentityAsserter | undefined;
  metrics: Metrics;
  record: RecordAnswer;
  /** True from the moment the server starts closing: fastify answers 503 then. */
  closing: () => boolean;
  /** True while load shedding refuses: fastify answers 503 then. */
  overloaded: () => boolean;
  /** fastify's own request handler: every request the lane does not answer. */
  framework: (request: IncomingMessage, response: ServerResponse) => void;
}): FastPath {
  // The route table as lanes, exact paths and subtree prefixes; HEAD takes GET's scope.
  const exact = new Map<string, Lane>();
  const subtrees: (Lane & { prefix: string })[] = [];
  for (const route of deps.routes) {
    const bits = new Map<string, ScopeRule>();
    for (const [method, scope] of Object.entries(route.methods)) bits.set(method, BUILTIN_SCOPE_TABLE.rule(scope));
    const get = bits.get('GET');
    if (get !== undefined) bits.set('HEAD', get);
    // The label the metrics and the access line use: the route's, as forward.ts names it.
    const label = route.subtree ? `${route.path}/*` : route.path;
    const lane = { label, bits, loginTokenOnly: route.auth === 'login-token', taken: deps.metrics.fastLaneRequests.bound({ route: label }) };
    exact.set(route.path, lane);
    if (route.subtree) subtrees.push({ ...lane, prefix: `${route.path}/` });
  }
  const laneOf = (path: string): Lane | undefined => {
    const found = exact.get(path);
    if (found !== undefined) return found;
    for (const lane of subtrees) if (path.startsWith(lane.prefix)) return lane;
    return undefined;
  };

  const upstream = new URL(deps.upstreamUrl);
  const basePath = upstream.pathname.replace(/\/+$/, '');
  const host = upstream.host;
  const pool = deps.pool;
  const { policy, limiter } = deps.rateLimits;
  const framework = deps.framework;
  const varyOrigin = deps.varyOrigin;

  function handle(request: IncomingMessage, response: ServerResponse): void {
    const method = request.method ?? '';
    const headers = request.headers;
    const userAgent = headers['user-agent'];
    if (userAgent === undefined || userAgent.trim() === '') return framework(request, response);
    if (headers.origin !== undefined || headers.expect !== undefined) return framework(request, response);
    // No Host (HTTP/1.1), two, or one that is no host: fastify's first hook refuses it (admission.ts).
    if (hostProblem(request) !== undefined) return framework(request, response);
    // A body streams to the upstream as it arrives (undici reads the request with backpressure);
    // node's parser has already refused a request with both a length and chunked, or a bad length.
    // Any transfer coding but plain chunked is the framework's to refuse (path-guard.ts): node has
    // removed the chunked framing only, and the coding's name would not reach the upstream.
    const length = headers['content-length'];
    const coding = headers['transfer-encoding'];
    if (coding !== undefined && coding !== 'chunked') return framework(request, response);
    const hasBody = coding !== undefined || (length !== undefined && length !== '0');
    if (hasBody && (method === 'GET' || method === 'HEAD')) return framework(request, response);
    const url = request.url ?? '';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path.length > MAX_PATH || path.includes('%') || isAmbiguousPath(url)) return framework(request, response);
    const lane = laneOf(path);
    if (lane === undefined || deps.closing() || deps.overloaded()) return framework(request, response);
    const bit = lane.bits.get(method);
    if (bit === undefined) return framework(request, response); // a method the route does not forward: fastify's 405

    const bearer = readBearer(headers.authorization, request.rawHeaders);
    if (!bearer.ok) return framework(request, response);
    const resolved = deps.resolver.resolveCached(bearer.token);
    if (resolved !== undefined) {
      if (!forward(request, response, lane, bit, method, url, hasBody, resolved, performance.now())) framework(request, response);
      return;
    }
    // A miss (or the cache off): the one store read (or signature check) the framework's path
    // would make, awaited here. Then the same lane; or, for any refusal or wait, the framework's
    // path with that answer (settled-resolution.ts), so the store is never asked twice.
    const startedAt = performance.now();
    const loading = loadResolution(bearer.token);
    loading.then(
      (resolution) => {
        // A client that went while the store answered has nobody left to answer: its request
        // goes nowhere (as one gone mid-answer takes its upstream request with it), and, like a
        // request whose client went on the framework's way, it has no access line.
        if (request.socket.destroyed || response.destroyed) return;
        // Admitted before any shutdown or load shedding that began meanwhile (checked above, as
        // the framework checks them once, on arrival): an in-flight request, served.
        if (!forward(request, response, lane, bit, method, url, hasBody, resolution, startedAt)) handOver(request, response, loading);
      },
      () => handOver(request, response, loading),
    );
  }

  /** The resolver's answer as a promise, a synchronous throw (a bug) included. */
  function loadResolution(token: string): Promise<Resolution> {
    try {
      return Promise.resolve(deps.resolver.resolve(token));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  function handOver(request: IncomingMessage, response: ServerResponse, resolution: Promise<Resolution>): void {
    keepSettledResolution(request, resolution);
    framework(request, response);
  }

  /**
   * Forwards the request for a resolved credential, when nothing refuses it or makes it wait (a
   * scope, a login-token-only route, an assertion to sign, rate-limit budget to lease): true when
   * taken, having answered; false, having done nothing, for the framework to answer.
   */
  function forward(
    request: IncomingMessage,
    response: ServerResponse,
    lane: Lane,
    bit: ScopeRule,
    method: string,
    url: string,
    hasBody: boolean,
    resolved: Resolution,
    startedAt: number,
  ): boolean {
    if (!resolved.ok) return false;
    const principal = resolved.principal;
    if (!principal.scopes.holds(bit) || (lane.loginTokenOnly && principal.via !== 'jwt')) return false;
    let assertion: string | null = null;
    if (deps.identity !== undefined) {
      const kept = deps.identity.current(principal);
      if (kept === undefined) return false;
      assertion = kept;
    }
    const limit = policy.limitFor(principal);
    const verdict = limit === undefined ? undefined : limiter.takeHeld(principal, limit);
    if (limit !== undefined && verdict === undefined) return false;

    // Taken: from here the answer is this lane's.
    const headers = request.headers;
    lane.taken.inc();
    const via = principal.via;
    deps.recordDecision(via, 'allowed', 'ok');
    if (via === 'api_key') deps.noteKeyUse(principal);
    const requestId = requestIdOf(request);
    const answerHeaders: OutgoingHeaders = { 'x-request-id': requestId, 'x-authgate-environment': deps.environment };
    if (deps.hsts !== undefined) answerHeaders['strict-transport-security'] = deps.hsts;
    if (verdict !== undefined) {
      answerHeaders['ratelimit-policy'] = verdict.limit.policyHeader;
      answerHeaders['ratelimit'] = rateLimitHeader(verdict);
    }
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
      deps.record(requestId, method, lane.label, status || response.statusCode, performance.now() - startedAt, upstreamStartedAt, principal, ALLOWED[via]);
    });

    const outgoing = rewriteIdentityHeaders(withoutConnectionNamed(headers), principal, requestId, deps.forwardedInfo(request), assertion, BUILTIN_SCOPE_TABLE);
    outgoing['host'] = host;
    const fail = (error: Error & { code?: string }) => {
      // The abort above (the client went, its body cut short or not): nobody is waiting for an answer.
      if (clientGone) return;
      const problem = upstreamProblem(error);
      deps.metrics.upstreamErrors.inc({ route: lane.label, kind: problem.reason ?? 'unknown' });
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
    pool.dispatch(
      { path: basePath + url, method: method as Dispatcher.HttpMethod, headers: outgoing as Record<string, string>, body: hasBody ? request : null },
      {
        onRequestStart(c) {
          controller = c;
          if (clientGone) c.abort(CLIENT_CLOSED);
        },
        onResponseStart(_c, statusCode, upstreamHeaders) {
          status = statusCode;
          if (clientGone) return;
          // The same answer headers as the framework's path: cache headers private to the credential, Vary with Origin under CORS.
          const forwarded = upstreamAnswerHeaders(upstreamHeaders as OutgoingHeaders, verdict !== undefined, varyOrigin);
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
    return true;
  }

  return handle;
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
