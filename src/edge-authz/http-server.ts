/**
 * The authorization port for edge proxies over HTTP (issue 30): nginx `auth_request`, Traefik and
 * Caddy forward-auth, Envoy `ext_authz` in HTTP mode. Plain node:http, no framework: each answer is
 * one decision and a few headers, and the proxy in front waits on it for every request it forwards
 * (the target is ≥ 0.95× a minimal node:http service behind nginx). The listener is the fast front
 * (fast-front.ts): a strictly simple request without a body is answered there through respond()
 * below, with the answers node's path writes (answers.ts); node's server here
 * gets every other connection and request (handle()).
 *
 * - Only AUTHGATE_AUTHZ_TRUSTED_PROXIES are answered: any other peer gets 403 (1114) before
 *   anything is read or decided.
 * - The body is never read, and never waited for: a proxy's check is in the headers (nginx sends
 *   its GET sub-request with the client's Content-Length and no body unless the snippet clears it).
 *   node discards a body that does come once the answer is sent; on `/authz/auth-request`, where
 *   none ever comes, an announced one closes the connection after the answer, so that its
 *   missing bytes are never read from the next request.
 * - Allow is exactly 200 with an empty body and `Content-Length: 0` (Envoy takes any other 2xx as a
 *   refusal; nginx keeps an upstream connection only for an answer without a body), the upstream
 *   headers as response headers, and for Envoy `x-envoy-auth-headers-to-remove` naming the
 *   identity headers the decision leaves unset (nginx, Traefik and Caddy drop the client's copy
 *   of a header their configuration copies when the answer lacks it).
 * - `Cache-Control: no-store`, or for an allow `max-age=N` and `X-Accel-Expires: N` with
 *   AUTHGATE_AUTHZ_CACHE_SECONDS (docs/edge-authz.md); refusals are never cacheable.
 * - Keep-alive idle timeout of 125 s: above nginx's (60 s), Go's http.Transport's (90 s, Traefik)
 *   and Envoy's (1 h is its own to close: it closes first), so a pooled connection is never closed
 *   under a proxy's request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import { clientErrorHandler, expectationFailedHandler } from '../request/refusals.js';
import { Problem, problems } from '../problems.js';
import { createDecisionAnswers, refusalAnswer as refusal } from './answers.js';
import type { EdgeDecider, EdgeDecision, EdgeProtocol, EdgeRequest } from './decision.js';
import { createFastFront, type FrontAnswer } from './fast-front.js';
import type { FrontRequest } from './simple-head.js';
import { protocolOf, readEdgeRequest } from './http-requests.js';
import type { PeerTrust } from './peers.js';
import type { EdgeRecorder } from './record.js';
import { ALL_SPEED_TRICKS, type SpeedTricks } from './speed-tricks.js';
import { incomingTraceIds, parseTraceparent } from '../tracing/trace-context.js';
import type { Tracing } from '../tracing/tracing.js';

export const AUTHZ_KEEP_ALIVE_TIMEOUT_MS = 125_000;

export type AuthzHttpServer = Readonly<{
  /** The port's listener (fast-front.ts): listen on this one; 'connection' for every connection. */
  server: NetServer;
  /** node's server, never listening itself: the connections and requests the fast front hands over. */
  http: Server;
  /** Answers what is in flight with `Connection: close`, closes idle connections, and resolves once every connection has ended. */
  close(): Promise<void>;
  closeAllConnections(): void;
}>;

const UNTRUSTED = new Problem('authzUntrustedPeer', 'This port answers the configured edge proxies only (AUTHGATE_AUTHZ_TRUSTED_PROXIES).', 'untrusted_peer');
const NOT_FOUND = new Problem('notFound', 'The authorization endpoints are /authz/auth-request, /authz/forward-auth and /authz/ext-authz/….');
const INTERNAL_ERROR = new Problem('internalError');

export function createAuthzHttpServer(deps: {
  decide: EdgeDecider;
  trusted: PeerTrust;
  record: EdgeRecorder;
  /** A fault that is no refusal (answered 500). */
  onFault: (error: unknown) => void;
  /** AUTHGATE_TRACING=on: a server span per request, as on the public port (issue 33). */
  tracing?: Tracing | undefined;
  /** AUTHGATE_AUTHZ_SPEED_TRICKS_OFF (speed-tricks.ts): here, the kept header blocks and the fast front; all on when not given. */
  speedTricks?: SpeedTricks | undefined;
}): AuthzHttpServer {
  const { decide, record, tracing } = deps;
  const speedTricks = deps.speedTricks ?? ALL_SPEED_TRICKS;
  let closing = false;
  // A peer's address is its connection's: checked once per connection, not per kept-alive request.
  const peers = new WeakMap<Socket, boolean>();
  const trusted = (socket: Socket): boolean => {
    let known = peers.get(socket);
    if (known === undefined) peers.set(socket, (known = deps.trusted(socket.remoteAddress)));
    return known;
  };

  // The answers (answers.ts): while the port closes, every one ends its connection.
  const refusalAnswer = (problem: Problem, close = false): FrontAnswer => refusal(problem, close || closing);
  const decisionAnswers = createDecisionAnswers(speedTricks.headerBlocks);
  const decisionAnswer = (protocol: EdgeProtocol, decision: EdgeDecision, close: boolean): FrontAnswer => decisionAnswers(protocol, decision, close || closing);

  function refuse(response: ServerResponse, problem: Problem): void {
    const answer = refusalAnswer(problem);
    response.writeHead(answer.status, answer.headers).end(answer.body);
  }

  /** A refusal made here, before any decision: counted and logged as the protocol's. */
  function refuseUndecided(request: IncomingMessage, response: ServerResponse, protocol: EdgeProtocol, problem: Problem, startedAt: number): void {
    refuse(response, problem);
    const status = problems[problem.problem].status;
    record({ protocol, method: request.method ?? '', route: undefined, status, startedAt, requestId: undefined, principal: null, authDecision: undefined, trace: traceOf(request) });
    endSpan(request, status);
  }

  /** The request's trace ids: the port's own span with tracing on, else the proxy's traceparent (read only when sent). */
  const traceOf = (request: IncomingMessage) => (tracing !== undefined ? tracing.ids(request) : undefined) ?? (request.headers.traceparent === undefined ? undefined : incomingTraceIds(request));
  /** Ends the span of a request answered before any decision. */
  const endSpan = (request: IncomingMessage, status: number) => tracing?.finish(request, { route: 'unmatched', status, credentialKind: undefined, reason: undefined, orgId: undefined });

  /**
   * The 500 of a decision that threw or failed, or of an answer that could not be made or written:
   * its fault reported, and counted and logged as the decider's finish records a request it found
   * no route for (outcome "error", route "unmatched"): the fault's text goes to the report only.
   * `failed` ends what else must end (a span).
   */
  function faultAnswer(error: unknown, edgeRequest: EdgeRequest, close: boolean, startedAt: number, failed: (() => void) | undefined): FrontAnswer {
    deps.onFault(error);
    failed?.();
    const { protocol, method, requestId, trace } = edgeRequest;
    record({ protocol, method, route: undefined, status: 500, startedAt, requestId, principal: null, authDecision: undefined, trace });
    return refusalAnswer(INTERNAL_ERROR, close);
  }

  /**
   * The decider's answer to `edgeRequest` (both paths), waited on only when the decision is; a
   * fault on the way (the decider's, or an answer that cannot be made of its decision) is the
   * fault's 500, so the promise rejects only if that too fails. `startedAt`: when the request
   * arrived (the fast front reads no clock for a decided request: a fault's is read when known).
   */
  function decidedAnswer(edgeRequest: EdgeRequest, protocol: EdgeProtocol, close: boolean, startedAt: number | undefined, failed?: () => void): FrontAnswer | Promise<FrontAnswer> {
    let decision: EdgeDecision | Promise<EdgeDecision>;
    try {
      decision = decide(edgeRequest);
      if (!(decision instanceof Promise)) return decisionAnswer(protocol, decision, close);
    } catch (error) {
      return faultAnswer(error, edgeRequest, close, startedAt ?? performance.now(), failed);
    }
    const since = startedAt ?? performance.now();
    const fault = (error: unknown) => faultAnswer(error, edgeRequest, close, since, failed);
    return decision.then((decided) => {
      try {
        return decisionAnswer(protocol, decided, close);
      } catch (error) {
        return fault(error);
      }
    }, fault);
  }

  /**
   * node's path (a connection or request the fast front handed over, or tracing on): node writes
   * the answer's head itself. The common request's answer and its kept bytes are the front's.
   */
  function write(response: ServerResponse, answer: FrontAnswer): void {
    // A proxy that gave up meanwhile (its own timeout) has nobody left to answer.
    if (response.destroyed) return;
    response.writeHead(answer.status, answer.headers).end(answer.body);
  }

  /**
   * Writes `answer`, and never throws: where node refuses to write it (a header value it will not
   * send: nothing of the answer is sent then, node checks the head first), or where no answer
   * could be made, the fault's answer (`fault`) while nothing is sent yet; else, or if that fails
   * too, the connection is ended.
   */
  function deliver(response: ServerResponse, answer: FrontAnswer | undefined, error: unknown, fault: (error: unknown) => FrontAnswer): void {
    if (answer !== undefined) {
      try {
        return write(response, answer);
      } catch (thrown) {
        error = thrown;
      }
    }
    try {
      if (!response.headersSent) return write(response, fault(error));
      deps.onFault(error);
    } catch {
      // The fault's own answer or its report failed: nothing more can be said on this connection.
    }
    response.destroy();
  }

  /**
   * node's 'request' handler. Anything thrown before the decision (a defect: the request's reading,
   * the peer's check) is a fault too, answered 500 and counted, never an exception out of node's
   * parser, which would end the process.
   */
  function handle(request: IncomingMessage, response: ServerResponse): void {
    const startedAt = performance.now();
    try {
      answerRequest(request, response, startedAt);
    } catch (error) {
      const protocol = protocolOf(request.url ?? '');
      deliver(response, undefined, error, (thrown) => {
        deps.onFault(thrown);
        if (protocol !== undefined) record({ protocol, method: request.method ?? '', route: undefined, status: 500, startedAt, requestId: undefined, principal: null, authDecision: undefined, trace: undefined });
        endSpan(request, 500);
        return refusalAnswer(INTERNAL_ERROR);
      });
    }
  }

  function answerRequest(request: IncomingMessage, response: ServerResponse, startedAt: number): void {
    const protocol = protocolOf(request.url ?? '');
    if (!trusted(request.socket)) {
      if (protocol === undefined) return void (refuse(response, UNTRUSTED), endSpan(request, 403));
      return refuseUndecided(request, response, protocol, UNTRUSTED, startedAt);
    }
    if (protocol === undefined) return void (refuse(response, NOT_FOUND), endSpan(request, 404));
    let edgeRequest = readEdgeRequest(protocol, request);
    if (edgeRequest instanceof Problem) return refuseUndecided(request, response, protocol, edgeRequest, startedAt);
    // Part of a trace: its ids for the access line, and with tracing on the span ended by the decider.
    if (tracing !== undefined) edgeRequest = { ...edgeRequest, trace: traceOf(request), endSpan: (answer) => tracing.finish(request, answer) };
    else if (request.headers.traceparent !== undefined) edgeRequest = { ...edgeRequest, trace: incomingTraceIds(request) };
    // nginx's sub-request never carries a body: a length it announces will never arrive.
    const headers = request.headers;
    const close = protocol === 'auth_request' && ((headers['content-length'] !== undefined && headers['content-length'] !== '0') || headers['transfer-encoding'] !== undefined);
    const failed = () => endSpan(request, 500);
    const answer = decidedAnswer(edgeRequest, protocol, close, startedAt, failed);
    const read: EdgeRequest = edgeRequest;
    const fault = (error: unknown) => faultAnswer(error, read, close, startedAt, failed);
    // Every way ends in deliver(), which never throws: no rejection is left unhandled.
    if (answer instanceof Promise) void answer.then((answered) => deliver(response, answered, undefined, fault), (error: unknown) => deliver(response, undefined, error, fault));
    else deliver(response, answer, undefined, fault);
  }

  /**
   * A request the fast front took (fast-front.ts): handle()'s steps for a trusted peer without
   * tracing (the front takes no other connection) and without a body (it takes no other request).
   */
  function respond(request: FrontRequest): FrontAnswer | Promise<FrontAnswer> {
    const protocol = protocolOf(request.url);
    if (protocol === undefined) return refusalAnswer(NOT_FOUND);
    let edgeRequest = readEdgeRequest(protocol, request);
    const traceparent = request.headers['traceparent'];
    const trace = traceparent === undefined ? undefined : parseTraceparent(traceparent);
    if (edgeRequest instanceof Problem) {
      // Its duration from here: the clock is read only for a request that is not decided (the
      // decider reads it for the others), ~0.05 µs per read (issue 30's fifth step); the head
      // was read a microsecond before.
      const startedAt = performance.now();
      record({ protocol, method: request.method, route: undefined, status: problems[edgeRequest.problem].status, startedAt, requestId: undefined, principal: null, authDecision: undefined, trace });
      return refusalAnswer(edgeRequest);
    }
    if (traceparent !== undefined) edgeRequest = { ...edgeRequest, trace };
    return decidedAnswer(edgeRequest, protocol, false, undefined);
  }

  const handler = tracing === undefined ? handle : tracing.serve(handle, 'http');
  // optimizeEmptyRequests (Node ≥ 24.12; older versions ignore it): a request without a body
  // (no Content-Length, no Transfer-Encoding: every nginx sub-request) gets no body stream
  // events, which nothing here listens to (the body is never read); measured in docs/performance.md.
  const server = createServer({ keepAliveTimeout: AUTHZ_KEEP_ALIVE_TIMEOUT_MS, optimizeEmptyRequests: true }, handler);
  server.keepAliveTimeout = AUTHZ_KEEP_ALIVE_TIMEOUT_MS;
  // Above the idle timeout (node's advice: a request's headers may start just before it ends), and
  // the whole request within a bound (slow-loris: the port is internal, but a peer may still be slow).
  server.headersTimeout = AUTHZ_KEEP_ALIVE_TIMEOUT_MS + 5_000;
  server.requestTimeout = AUTHZ_KEEP_ALIVE_TIMEOUT_MS + 10_000;
  // `Expect: 100-continue` is decided at once, without inviting the body; any other expectation is 417.
  server.on('checkContinue', handler);
  server.on('checkExpectation', expectationFailedHandler({}));
  // node's parser refusals (a malformed request, an oversized header block) as problems, as on the public port.
  server.on('clientError', clientErrorHandler({}));

  // The listener: the common request answered by the fast front, everything else by node's server.
  // With tracing on every request gets its span from node's path, so the front takes nothing; nor
  // with the speed trick `fast-front` off (speed-tricks.ts).
  const takesAny = tracing === undefined && speedTricks.fastFront;
  const front = createFastFront({
    http: server,
    takes: (socket) => takesAny && trusted(socket),
    respond,
    onFault: deps.onFault,
    keepAliveTimeoutMs: AUTHZ_KEEP_ALIVE_TIMEOUT_MS,
  });

  return {
    server: front.server,
    http: server,
    close: () => {
      closing = true;
      return front.close();
    },
    closeAllConnections: front.closeAllConnections,
  };
}
