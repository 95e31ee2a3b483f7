import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Problem, type ProblemName } from '../problems.js';
import { isAmbiguousPath } from './path-guard.js';
import { PROBLEM_CONTENT_TYPE, problemBody, sendProblem } from './error-handler.js';
import { newRequestId } from './request-id.js';

/**
 * The refusals that fastify or node would otherwise answer in their own words: a request node's
 * parser refuses, a target the router cannot decode, a known path with the wrong method, and a
 * request on a kept-alive connection once the server is closing. Each gets the same
 * application/problem+json as every other refusal, with an x-request-id, and echoes nothing the
 * client sent.
 */

/** Headers a server puts on every answer, whoever gives it (the public port: environment, HSTS). */
export type StaticHeaders = Readonly<Record<string, string>>;

/** What node's parser (or its request timer) refused, as a problem: node's own statuses. */
function clientProblem(code: string | undefined): ProblemName {
  if (code === 'HPE_HEADER_OVERFLOW') return 'headersTooLarge';
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return 'payloadTooLarge';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'requestTimeout';
  return 'badRequest';
}

const CLIENT_DETAIL: Partial<Record<ProblemName, string>> = {
  headersTooLarge: 'The request header block is over 16 KiB.',
  badRequest: 'The request is not valid HTTP/1.1.',
  requestTimeout: 'The request did not arrive in time.',
};

/** A whole HTTP/1.1 answer, for a socket that never became a request. */
export function rawProblem(name: ProblemName, staticHeaders: StaticHeaders, requestId: string = newRequestId()): string {
  const problem = problemBody(name, CLIENT_DETAIL[name]);
  const body = JSON.stringify(problem);
  let head = `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}\r\ncontent-type: ${PROBLEM_CONTENT_TYPE}\r\ncache-control: no-store\r\nx-request-id: ${requestId}\r\n`;
  for (const [header, value] of Object.entries(staticHeaders)) head += `${header}: ${value}\r\n`;
  return `${head}connection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

type ServerSocket = Socket & { _httpMessage?: { headersSent?: boolean } | null };

/**
 * fastify's `clientErrorHandler`: node's 'clientError' (an oversized header block, a malformed
 * request line or header, a request that did not arrive within requestTimeout) comes before
 * any request exists, so the answer is written to the socket by hand. Like node's own handler,
 * it writes only when nothing of another answer is on that socket yet (a half-written answer
 * followed by this one would corrupt both), and closes the connection: the parser cannot go on.
 */
export function clientErrorHandler(staticHeaders: StaticHeaders) {
  return function onClientError(error: Error & { code?: string }, socket: Socket): void {
    // A reset connection is already gone: there is no one to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const inFlight = (socket as ServerSocket)._httpMessage;
    if (socket.writable && (inFlight == null || inFlight.headersSent !== true)) {
      socket.write(rawProblem(clientProblem(error.code), staticHeaders));
    }
    socket.destroy();
  };
}

/**
 * node's 'checkExpectation': a request whose `Expect` is anything but `100-continue` never
 * reaches fastify; node would answer a bare 417. Here the 417 is a problem like every refusal.
 * (`100-continue` itself is answered when the body is first read, admission.ts, and stripped
 * before forwarding: identity-headers.ts.)
 */
export function expectationFailedHandler(staticHeaders: StaticHeaders) {
  return function onCheckExpectation(_request: IncomingMessage, response: ServerResponse): void {
    const body = JSON.stringify(problemBody('expectationFailed', 'Only Expect: 100-continue is supported.'));
    response.writeHead(417, {
      ...staticHeaders,
      'content-type': PROBLEM_CONTENT_TYPE,
      'cache-control': 'no-store',
      'x-request-id': newRequestId(),
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    response.end(body);
  };
}

type OnAnswered = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;

/**
 * fastify's `frameworkErrors`: the router could not decode the target (`/accounts/%zz`) or a
 * parameter is over maxParamLength. fastify's own answer echoes the raw path; this one does not.
 * No hook runs for such a request, so the headers every answer carries are set here, and the
 * server's onResponse work (the metric and the log line) is called when the answer is sent.
 */
export function frameworkErrorHandler(stamp: (request: FastifyRequest, reply: FastifyReply) => void, onAnswered?: OnAnswered) {
  const nothing = () => {};
  return function onFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    stamp(request, reply);
    if (onAnswered !== undefined) reply.raw.once('finish', () => onAnswered(request, reply, nothing));
    const detail = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path segment is too long.' : 'The request target is not valid percent-encoding.';
    sendProblem(reply, new Problem('badRequest', detail, 'bad_url'));
  };
}

/** The methods HTTP routes are declared with, in the order an Allow header lists them. */
export const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

/**
 * What the public port's catch-all (proxy/forward.ts, `/*`: every path is routed to it, so the
 * router alone no longer says which paths exist) forwards: the methods the live route table takes
 * on a path (none when no route of the table takes it).
 */
export type ForwardedMethods = Readonly<{
  methodsOf(path: string): ReadonlyMap<string, unknown> | undefined;
}>;

/**
 * The methods a path is routed for, none when the path is not routed at all: the gateway's own
 * routes, and the route table's (the catch-all itself routes nearly every path, so it counts only
 * through the table). Only asked when no route takes the request's method, so a 404 costs a few more
 * lookups and a served request none. A target that is not a plain origin-form path is never a
 * route (path-guard.ts).
 */
export function allowedMethods(app: FastifyInstance, url: string): string[] {
  if (isAmbiguousPath(url)) return [];
  const forwarded = app.forwardedMethods;
  const query = url.indexOf('?');
  const table = forwarded?.methodsOf(query === -1 ? url : url.slice(0, query));
  const methods = new Set([...METHOD_ORDER, ...app.supportedMethods]);
  return [...methods].filter((method) => {
    if (table?.has(method) === true) return true;
    // The catch-all is constrained (proxy/forward.ts), so a lookup without constraints never finds
    // it: it counts through the table only.
    return app.findRoute({ method, url }) !== null;
  });
}

/** The not-found handler: 405 with Allow when the path exists with other methods, else 404. */
export function notFoundOrMethodNotAllowed(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const allowed = allowedMethods(request.server, request.raw.url ?? '');
  if (allowed.length === 0) return sendProblem(reply, new Problem('notFound', 'No such route.'));
  reply.header('allow', allowed.join(', '));
  return sendProblem(reply, new Problem('methodNotAllowed', 'This path does not take this method; see Allow.', 'method_not_allowed'));
}

/**
 * An onRequest hook: a request no route takes is answered here (404, or 405 with Allow), from
 * its head. fastify would otherwise run its content-type parser for the not-found handler first:
 * read the body (after a 100 Continue), or refuse a large one 413 instead of saying the route
 * does not exist.
 */
export function refuseUnrouted(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (request.is404) notFoundOrMethodNotAllowed(request, reply); // answered: done is not called
  else done();
}

/**
 * Once close() has begun, a request that still arrives on a kept-alive connection (server.close()
 * only ends idle ones) gets a 503 problem with Retry-After and Connection: close, so the client
 * retries on another replica. This replaces fastify's return503OnClosing, whose body is its own.
 * The server's first onRequest hook asks `closing`: one boolean per request, no hook of its own.
 */
export function watchClosing(app: FastifyInstance): { readonly closing: boolean } {
  const state = { closing: false };
  app.addHook('preClose', (done) => {
    state.closing = true;
    done();
  });
  return state;
}

export function shuttingDown(reply: FastifyReply): Problem {
  reply.header('connection', 'close');
  return new Problem('shuttingDown', 'The gateway is shutting down; retry on a new connection.', 'shutting_down', 1);
}
