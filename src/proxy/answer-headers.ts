// The upstream's answer headers as the client gets them, on both forwarding paths.
import { privateCacheControl, TARGETED_CACHE_HEADERS, varyWith } from '../request/cache-headers.js';
import { UPSTREAM_CORS_HEADERS } from '../request/cors.js';
import { RATE_LIMIT_HEADERS } from '../limits/enforce.js';
import { HOP_BY_HOP, namedBy, type OutgoingHeaders } from './identity-headers.js';

/** Dropped from every upstream answer, in the one copy made of its headers. */
const DROPPED_FROM_ANSWERS: ReadonlySet<string> = new Set([...HOP_BY_HOP, ...UPSTREAM_CORS_HEADERS, ...TARGETED_CACHE_HEADERS]);
const GATEWAY_RATE_LIMIT: ReadonlySet<string> = new Set(RATE_LIMIT_HEADERS);

/**
 * The upstream's answer headers as the client gets them, on both forwarding paths (this one and
 * the fast lane): without its hop-by-hop headers (and those its `Connection` names), its RateLimit
 * headers when the gateway set its own, its CORS headers (the gateway's setting alone decides)
 * and its instructions to CDNs alone (TARGETED_CACHE_HEADERS).
 *
 * Every forwarded request carries a credential, so an answer a cache may keep (Cache-Control
 * without no-store, or Expires) is made private to it: `private` in Cache-Control, which every
 * shared cache and CDN honours (request/cache-headers.ts), and `Authorization` in Vary, so the
 * browser's own cache does not answer one credential with another's copy. An answer without
 * either header is left as it is (RFC 9111 §3.5 already forbids a shared cache to reuse it), so
 * the common answer costs two property reads. With CORS origins configured, Vary also names
 * `Origin`, merged with the upstream's own.
 */
export function upstreamAnswerHeaders(headers: OutgoingHeaders, rateLimited: boolean, varyOrigin: boolean): OutgoingHeaders {
  const named = namedBy(headers['connection']);
  const out: OutgoingHeaders = {};
  for (const name in headers) {
    if (DROPPED_FROM_ANSWERS.has(name) || (rateLimited && GATEWAY_RATE_LIMIT.has(name)) || named?.has(name) === true) continue;
    out[name] = headers[name];
  }
  const cacheControl = out['cache-control'];
  let vary = out['vary'];
  if (cacheControl !== undefined || out['expires'] !== undefined) {
    const kept = cacheControl === undefined ? 'private' : privateCacheControl(cacheControl);
    if (kept !== null) {
      out['cache-control'] = kept;
      vary = varyWith(vary, 'Authorization');
    }
  }
  if (varyOrigin) vary = varyWith(vary, 'Origin');
  if (vary !== undefined) out['vary'] = vary;
  return out;
}
