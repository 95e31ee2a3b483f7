/**
 * What each HTTP protocol's proxy sends, read into one EdgeRequest (decision.ts). The paths and
 * headers are the proxies' contracts (research/forward-auth.md §0):
 *
 * - `/authz/auth-request`, nginx `auth_request` and ingress-nginx `auth-url`: the original method
 *   in X-Original-Method, the original target in X-Original-URI (nginx's `$request_uri`, as the
 *   documented snippet sets it) or X-Original-URL (ingress-nginx: `$scheme://$http_host$request_uri`).
 *   Both proxies pass the client's own headers on, so the one the proxy did not set is the
 *   client's: when both are there they must say the same path and query, or the request is
 *   refused (ingress-nginx sets X-Original-URI itself only with `auth-method`); and X-Original-URL
 *   holds the client's Host, so what follows its authority must start with `/` (`Host: x#` or
 *   `Host: x:1?` would otherwise make `/admin` read as `/`);
 * - `/authz/forward-auth`, Traefik ForwardAuth and Caddy `forward_auth`: X-Forwarded-Method and
 *   X-Forwarded-Uri (path and query); -Proto and -Host describe the origin, which the route table
 *   does not match on;
 * - `/authz/ext-authz/<path>`, Envoy `ext_authz` in HTTP mode (`path_prefix`, Istio's
 *   `pathPrefix`, Envoy Gateway's `path`): the original method is the request's, the original
 *   target the suffix (query kept).
 *
 * A header the proxy sends once and a request sends once is refused when there are two: node
 * joins repeated unknown headers with ", ", and neither a method nor a target holds a space.
 */
import { isIP } from 'node:net';
import { Problem } from '../problems.js';
import { isGatewayOnlyHeader } from '../proxy/identity-headers.js';
import type { EdgeProtocol, EdgeRequest } from './decision.js';
import { lastForwardedAddress } from './forwarded-for.js';

export const AUTH_REQUEST_PATH = '/authz/auth-request';
export const FORWARD_AUTH_PATH = '/authz/forward-auth';
export const EXT_AUTHZ_PREFIX = '/authz/ext-authz';

/** An HTTP method is a token (RFC 9110 §9.1, §5.6.2). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Printable ASCII but space: a request target, and a request id worth carrying into the log. */
const VISIBLE = /^[\x21-\x7e]+$/;
const MAX_REQUEST_ID = 200;
/** `scheme://authority` then the rest: X-Original-URL's origin-form part is the rest, which must start with `/`. */
const ABSOLUTE_URL = /^https?:\/\/[^/?#]*(.*)$/is;

/** Which protocol a path of the authorization port serves; undefined for any other path (404). */
export function protocolOf(url: string): EdgeProtocol | undefined {
  if (url.startsWith(EXT_AUTHZ_PREFIX)) {
    const next = url.charCodeAt(EXT_AUTHZ_PREFIX.length);
    // The prefix itself, or followed by the original path or query; never `/authz/ext-authzX`.
    if (Number.isNaN(next) || next === 47 /* / */ || next === 63 /* ? */) return 'ext_authz_http';
    return undefined;
  }
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (path === AUTH_REQUEST_PATH) return 'auth_request';
  if (path === FORWARD_AUTH_PATH) return 'forward_auth';
  return undefined;
}

/**
 * What is read of the proxy's request: node's IncomingMessage has this shape, and so has the
 * request the fast front (fast-front.ts) parsed itself. `headers` by lower-case name, node's way
 * (a repeated unknown header joined with ", "); `rawHeaders` name, value, name, value… as sent.
 */
export type EdgeHttpRequest = Readonly<{
  url?: string | undefined;
  method?: string | undefined;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  rawHeaders: readonly string[];
  socket: Readonly<{ remoteAddress?: string | undefined }>;
}>;

/** The original request the proxy described, or the 400 that says why there is none to decide. */
export function readEdgeRequest(protocol: EdgeProtocol, request: EdgeHttpRequest): EdgeRequest | Problem {
  const headers = request.headers;
  let method: string | undefined;
  let target: string | undefined;
  if (protocol === 'ext_authz_http') {
    method = request.method;
    const suffix = (request.url ?? '').slice(EXT_AUTHZ_PREFIX.length);
    target = suffix === '' || suffix.charCodeAt(0) === 63 /* ? */ ? `/${suffix}` : suffix;
  } else if (protocol === 'auth_request') {
    method = single(headers['x-original-method']);
    const uri = single(headers['x-original-uri']);
    const url = single(headers['x-original-url']);
    if (method === undefined || (uri === undefined && url === undefined)) {
      return new Problem('originalRequestMissing', 'Send X-Original-Method and X-Original-URI (or X-Original-URL) with the original request\'s method and target.', 'original_missing');
    }
    target = uri;
    if (url !== undefined) {
      const match = ABSOLUTE_URL.exec(url);
      if (match === null) return new Problem('originalRequestInvalid', 'X-Original-URL is not an http(s) URL.', 'original_invalid');
      const rest = match[1]!;
      // `Host: x#` or `Host: x:1?` puts a `#` or `?` right after the authority: the path nginx forwards comes after it.
      if (rest.charCodeAt(0) !== 47 /* / */) return new Problem('originalRequestInvalid', 'X-Original-URL has no path right after its host.', 'original_invalid');
      if (uri !== undefined && uri !== rest) return new Problem('originalRequestInvalid', 'X-Original-URI and X-Original-URL describe different requests.', 'original_invalid');
      target = rest;
    }
  } else {
    method = single(headers['x-forwarded-method']);
    target = single(headers['x-forwarded-uri']);
    if (method === undefined || target === undefined) {
      return new Problem('originalRequestMissing', 'Send X-Forwarded-Method and X-Forwarded-Uri with the original request\'s method and target.', 'original_missing');
    }
  }
  if (method === undefined || !TOKEN.test(method)) return new Problem('originalRequestInvalid', 'The original method is not one HTTP method.', 'original_invalid');
  // The target goes to the path guard as it is; one with a space is two headers joined, or no target.
  if (target === undefined || !VISIBLE.test(target)) return new Problem('originalRequestInvalid', 'The original target is not one request target.', 'original_invalid');
  const requestId = single(headers['x-request-id']);
  return {
    protocol,
    method,
    target,
    authorization: authorizationValues(request.rawHeaders),
    clientHeaders: headers,
    identityHeaderSent: carriesGatewayOnlyHeader(headers),
    clientAddress: clientAddressOf(protocol, request),
    requestId: requestId !== undefined && requestId.length <= MAX_REQUEST_ID && VISIBLE.test(requestId) ? requestId : undefined,
  };
}

/** A header's value, undefined when absent or empty (nginx sends no header for an empty variable; others might). */
function single(value: string | string[] | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  return typeof value === 'string' ? value : value.join(', ');
}

/** Whether any header name is one only authgate sets (names are node's, lower case). */
function carriesGatewayOnlyHeader(headers: EdgeHttpRequest['headers']): boolean {
  for (const name in headers) if (isGatewayOnlyHeader(name)) return true;
  return false;
}

/** Every Authorization value, as sent (node's `headers` keeps only the first). */
function authorizationValues(raw: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') values.push(raw[i + 1]!);
  }
  return values;
}

/**
 * The client's address as the trusted proxy reported it (a public route's limit counts per
 * address): nginx's X-Real-IP (the snippets set it to `$remote_addr`; ingress-nginx sets it), else
 * the last X-Forwarded-For entry, the one the proxy itself appended (Traefik, Caddy, Envoy with
 * `use_remote_address`); else the proxy's own address. Only an address is taken.
 */
function clientAddressOf(protocol: EdgeProtocol, request: EdgeHttpRequest): string {
  const headers = request.headers;
  if (protocol === 'auth_request') {
    const real = headers['x-real-ip'];
    if (typeof real === 'string' && isIP(real.trim()) !== 0) return real.trim();
  }
  const forwarded = headers['x-forwarded-for'];
  return (typeof forwarded === 'string' ? lastForwardedAddress(forwarded) : undefined) ?? request.socket.remoteAddress ?? 'unknown';
}
