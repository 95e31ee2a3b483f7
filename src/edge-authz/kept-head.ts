/**
 * HAND-WRITTEN FOR SPEED (issue 30): the header block of an allow, kept and written again as
 * node wrote it, instead of node building it anew from an object on every decision.
 *
 * An allow's headers are the same for every request of one credential while its identity
 * assertion is kept (decider.ts keeps that EdgeAllow object): the organization, its scopes, the
 * ~600-byte signed assertion, Cache-Control, Content-Length: 0. node's writeHead() validated each
 * name and value (a regular expression over the assertion), matched each name against its
 * special headers and concatenated the block, on every request. Measured on the bench
 * (nginx-authz, docs/performance.md "Issue 30: the authorization port's answer"): node's header
 * work was ~5 % of the port's busy time.
 *
 * How: the first time a kept allow is answered, node writes it (writeHead) and the block it made
 * (`response._header`, the string node sends) is kept, split around its Date line. Later answers
 * set that block, with the current date, where writeHead would have put it, and end() sends it as
 * node sends its own. So the bytes are node's own by construction (test/edge-authz/kept-head.test.ts
 * compares them). Taken only where node would have made the same block: a keep-alive answer (no
 * `Connection: close` of ours or the client's), no 100-continue pending, no request limit reached;
 * anything else goes through writeHead as before. The fields used (`_header`, `_contentLength`,
 * `_removedContLen`, `_expect_continue`) are node's OutgoingMessage internals, stable for years and
 * read by express and on-headers too; if they are ever missing the fast way is simply not taken.
 */
import type { ServerResponse } from 'node:http';

/** node's header block of one answer, around its Date line. */
export type KeptHead = Readonly<{ before: string; after: string }>;

/** What node's OutgoingMessage keeps of an answer's head (node:_http_outgoing). */
type Outgoing = ServerResponse & {
  _header?: string | null;
  _contentLength?: number | null;
  _removedContLen?: boolean;
  _expect_continue?: boolean;
  maxRequestsOnConnectionReached?: boolean;
  _last?: boolean;
};

const DATE = '\r\nDate: ';

/**
 * After writeHead: the block node made, split around its Date line, to be written again for the
 * same answer; undefined when this answer is not one to keep (not keep-alive, or an unknown shape).
 */
export function keepHead(response: ServerResponse): KeptHead | undefined {
  const out = response as Outgoing;
  const header = out._header;
  if (typeof header !== 'string' || out._last !== false || !response.shouldKeepAlive || out._contentLength !== 0) return undefined;
  const start = header.indexOf(DATE);
  if (start === -1) return undefined;
  const end = header.indexOf('\r\n', start + DATE.length);
  if (end === -1) return undefined;
  return { before: header.slice(0, start + DATE.length), after: header.slice(end) };
}

/**
 * Sets a kept block (status 200, Content-Length: 0) as this answer's head, where writeHead would
 * have set it; false, and nothing changed, when node would make another block for this answer.
 */
export function writeKeptHead(response: ServerResponse, head: KeptHead): boolean {
  const out = response as Outgoing;
  if (out._header !== null || !response.shouldKeepAlive || out._expect_continue === true || out.maxRequestsOnConnectionReached === true || !response.sendDate || out._last !== false) return false;
  response.statusCode = 200;
  response.statusMessage = 'OK';
  // What node's writeHead records of Content-Length: 0 (matchHeader), then its block.
  out._contentLength = 0;
  out._removedContLen = false;
  out._header = head.before + httpDate() + head.after;
  return true;
}

let dateSecond = -1;
let dateText = '';
/** The Date header's value (RFC 9110 IMF-fixdate, as node writes it), made once per second. */
export function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
