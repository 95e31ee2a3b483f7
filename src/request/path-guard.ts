import type { FastifyReply, FastifyRequest } from 'fastify';
import { Problem } from '../problems.js';

/**
 * A forwarded path must mean the same to the upstream as it did to the gateway's route table, or
 * an upstream that normalizes paths could be steered past it. So a path with a dot segment (raw
 * or percent-encoded), an encoded slash or backslash, a raw backslash, or an absolute-form request
 * target is not a route: 404, and nothing reaches the upstream.
 *
 * So is a percent-encoded unreserved character (a letter, digit, `-`, `.`, `_`, `~`: RFC 3986
 * §2.3 says they are the same decoded, and clients should never encode them). The route table
 * compares raw bytes, so `/%61ccounts` is not `/accounts` to it; an upstream that decodes would
 * read `/accounts`, and under a public `/` subtree the request would reach it without a credential.
 */
const DOT_SEGMENT_OR_SEPARATOR = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)|%2f|%5c|\\/i;
const ENCODED_UNRESERVED = /%(?:3[0-9]|[46][1-9a-f]|[57][0-9a]|2d|2e|5f|7e)/i;
/** Once decoded, an encoded dot matters only as a dot segment (DOT_SEGMENT_OR_SEPARATOR): `file%252ejson` stays forwarded. */
const ENCODED_UNRESERVED_BUT_DOT = /%(?:3[0-9]|[46][1-9a-f]|[57][0-9a]|2d|5f|7e)/i;
const AMBIGUOUS = { test: (path: string) => DOT_SEGMENT_OR_SEPARATOR.test(path) || ENCODED_UNRESERVED.test(path) };

/** The path of an origin-form target, without its query (every request path's one reading of it). */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export function isAmbiguousPath(url: string): boolean {
  if (url.charCodeAt(0) !== 47 /* '/' */) return true; // absolute-form or asterisk-form
  return AMBIGUOUS.test(pathOf(url));
}

/**
 * A path that is still ambiguous after one percent-decoding (`/accounts/%252e%252e/x` is
 * `/accounts/%2e%2e/x` once decoded): an upstream or framework that decodes twice would see
 * `/accounts/../x`; likewise `/%2561ccounts` (`/%61ccounts`, an encoded unreserved character once decoded). Refused as Envoy and Kong do. Only a path with a `%` is decoded at all.
 */
export function isDoublyEncodedPath(path: string): boolean {
  if (path.indexOf('%') === -1) return false;
  let once: string;
  try {
    once = decodeURIComponent(path);
  } catch {
    return true; // not decodable: the router refuses it before this, but never forward it
  }
  return DOT_SEGMENT_OR_SEPARATOR.test(once) || ENCODED_UNRESERVED_BUT_DOT.test(once);
}

/**
 * A body in a transfer coding other than plain `chunked` (node accepts `gzip, chunked` and takes
 * off only the chunking): forwarded, its bytes would reach the upstream still coded but framed as
 * plain, since Transfer-Encoding is hop-by-hop and not passed on. Refused, as nginx does (with 501;
 * here a 400, since it is the client's request that cannot be served).
 */
function hasUnsupportedTransferCoding(request: FastifyRequest): boolean {
  const coding = request.headers['transfer-encoding'];
  return coding !== undefined && coding.trim().toLowerCase() !== 'chunked';
}

export function pathGuard(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const url = request.raw.url ?? '';
  const path = pathOf(url);
  if (url.charCodeAt(0) !== 47 || AMBIGUOUS.test(path)) done(new Problem('notFound', 'No such route.', 'ambiguous_path'));
  else if (isDoublyEncodedPath(path)) done(new Problem('badRequest', 'The path still holds a percent-encoded dot segment, slash or backslash once decoded.', 'double_encoded_path'));
  else if (hasUnsupportedTransferCoding(request)) done(new Problem('badRequest', 'Only the chunked transfer coding is accepted.', 'transfer_coding'));
  else done();
}
