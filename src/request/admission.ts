import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Problem } from '../problems.js';

/**
 * How a request's head is admitted before its body is touched, on both ports (issue 26):
 *
 * - `Expect: 100-continue` is answered with 100 only when someone starts reading the body: node
 *   emits 'checkContinue' instead of sending 100 itself, and the request then takes the same way
 *   as any other. Every refusal made from the head (User-Agent, Host, credential, scope, rate
 *   limit, body limit by Content-Length, unknown route or method) answers before the body is
 *   read, so it is the final answer, without 100; node then closes the connection, as the client
 *   may still send the body. An admitted request's body is read by the upstream's client or by
 *   the gateway's own route, and that first read sends the 100.
 * - An answer given while the body is still unread (nobody reading it, or a status of 400 or
 *   more) would leave node reading (and discarding) all of it to keep the connection: up to DRAIN_LIMIT declared bytes that is
 *   cheaper than a new connection; beyond it, or for a chunked body (no declared size), the answer
 *   says `Connection: close` and node closes the connection once it is sent.
 * - Host (RFC 9112 §3.2): an HTTP/1.1 request without one, any request with more than one, or
 *   one whose value is no `host[:port]`, is refused 400 as a problem (hostProblem). node's own
 *   bare 400 for a missing Host is turned off (requireHostHeader: false) so that the gateway's
 *   first hook answers it like every refusal, with an x-request-id and an access-log line.
 */

/** The largest unread body (declared by Content-Length) drained to keep the connection alive. */
export const DRAIN_LIMIT = 64 * 1024;

/** node:http's request handler. */
export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** The node server options every port takes: a missing Host is the gateway's to refuse. */
export const ADMISSION_SERVER_OPTIONS = { requireHostHeader: false } as const;

/**
 * Puts `handle` (fastify's handler, or the fast lane before it) behind the body rules above, for
 * 'request' and for 'checkContinue' alike, in place of the server's current request listeners.
 */
export function admitRequests(server: Server, handle: RequestHandler): void {
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (hasBody(request)) closeIfRefusedUnread(request, response);
    handle(request, response);
  });
  // Only an HTTP/1.1 `Expect: 100-continue` comes here (node answers any other Expect with
  // 'checkExpectation': refusals.ts); with this listener node sends no 100 of its own.
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    continueOnFirstRead(request, response);
    if (hasBody(request)) closeIfRefusedUnread(request, response);
    handle(request, response);
  });
}

function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

type Readable = { _read: (size: number) => void };

/**
 * Sends `100 Continue` when the body is first read. A stream's `_read` is where every way of
 * reading comes through (a 'data' listener, pipe, read(), async iteration), and node's
 * IncomingMessage calls it only for a reader (it starts with readingMore set). After the answer
 * has begun there is nothing to continue: node's own drain of an unread body (req._dump() once
 * the answer is sent) reads without inviting it.
 */
function continueOnFirstRead(request: IncomingMessage, response: ServerResponse): void {
  const readable = request as unknown as Readable;
  const read = readable._read;
  readable._read = function (this: IncomingMessage, size: number) {
    delete (this as unknown as Partial<Readable>)._read; // back to the prototype's: once only
    if (!response.headersSent && !response.writableEnded && !response.destroyed) response.writeContinue();
    read.call(this, size);
  };
}

/**
 * An answer to a request whose body has not all arrived, past DRAIN_LIMIT or chunked, says
 * `Connection: close` when nobody reads that body or the answer is a refusal (400 or more): node then closes once the answer is sent instead of reading
 * the rest. fastify, the fast lane and node's refusals all write their head with writeHead.
 */
function closeIfRefusedUnread(request: IncomingMessage, response: ServerResponse): void {
  const length = request.headers['content-length'];
  if (request.headers['transfer-encoding'] === undefined && length !== undefined && Number(length) <= DRAIN_LIMIT) return;
  const writeHead = response.writeHead;
  response.writeHead = function (this: ServerResponse, statusCode: number, ...rest: unknown[]) {
    // Nobody reading the body (readableFlowing still null) means only node's drain ever would:
    // a refusal whatever its status (a CORS preflight's 204 too). A body being read (streamed to
    // the upstream) is left alone unless the answer is a refusal.
    if (!request.complete && (statusCode >= 400 || request.readableFlowing === null)) {
      this.setHeader('connection', 'close');
      // writeHead's own headers win over setHeader's: a `connection` among them must say close too.
      const headers = rest[rest.length - 1];
      if (headers !== null && typeof headers === 'object' && !Array.isArray(headers) && 'connection' in headers) (headers as Record<string, unknown>)['connection'] = 'close';
    }
    return (writeHead as (this: ServerResponse, statusCode: number, ...rest: unknown[]) => ServerResponse).call(this, statusCode, ...rest);
  } as ServerResponse['writeHead'];
}

/** `host[:port]` (RFC 3986 §3.2.2-3): an IP literal in brackets, or a reg-name/IPv4 of its characters. */
const HOST = /^(?:\[[0-9A-Za-z:._~!$&'()*+,;=%-]+\]|[0-9A-Za-z._~!$&'()*+,;=%-]*)(?::[0-9]*)?$/;

/**
 * RFC 9112 §3.2: 400 for an HTTP/1.1 request without Host, any request with more than one, or a
 * Host that is no host. node keeps only the first of two Host headers in `headers`, so they are
 * counted in rawHeaders (as readBearer counts Authorization); a second one would let the gateway
 * and the upstream disagree about which host was asked for.
 */
export function hostProblem(request: IncomingMessage): Problem | undefined {
  const host = request.headers.host;
  if (host === undefined) {
    if (request.httpVersionMajor === 1 && request.httpVersionMinor === 0) return undefined;
    return new Problem('missingHost', 'An HTTP/1.1 request needs a Host header.', 'missing_host');
  }
  const raw = request.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  if (count > 1) return new Problem('duplicateHost', 'The request has more than one Host header.', 'duplicate_host');
  if (!HOST.test(host)) return new Problem('invalidHost', 'The Host header is not a host name or address, with an optional port.', 'invalid_host');
  return undefined;
}
