import type { FastifyReply, FastifyRequest } from 'fastify';
import { Problem } from '../problems.js';

/**
 * A forwarded path must mean the same to the upstream as it did to the gateway's router, or an
 * upstream that normalizes paths could be steered past the route table. So a path with a dot
 * segment (raw or percent-encoded), an encoded slash or backslash, a raw backslash, or an
 * absolute-form request target is not a route: 404, and nothing reaches the upstream.
 */
const AMBIGUOUS = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)|%2f|%5c|\\/i;

export function isAmbiguousPath(url: string): boolean {
  if (url.charCodeAt(0) !== 47 /* '/' */) return true; // absolute-form or asterisk-form
  const query = url.indexOf('?');
  return AMBIGUOUS.test(query === -1 ? url : url.slice(0, query));
}

export function pathGuard(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  if (isAmbiguousPath(request.raw.url ?? '')) done(new Problem('notFound', 'No such route.', 'ambiguous_path'));
  else done();
}
