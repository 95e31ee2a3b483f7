// CORS for the public API (AUTHGATE_CORS_ORIGINS): preflights answered by the gateway, and the
// allowed origin's headers on every answer to an actual request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { varyWith } from './cache-headers.js';

/**
 * What the gateway does for browser apps on other origins, from `config.cors.origins`: none
 * (the default), a list of exact origins, or any (`*`).
 *
 * A preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) is answered here, 204,
 * on any path: never authenticated (a browser never sends a credential with it), never forwarded
 * (OPTIONS is otherwise a forwarded method on /accounts), never rate-limited. An unknown path gets
 * its 204 too: the browser then sends the actual request and the app reads the gateway's own 404
 * or 405 problem, rather than an opaque network error; the answer names no route either way. For
 * an origin that is not allowed (or with none configured) the 204 has no Access-Control-Allow-*
 * header, so the browser refuses the actual request.
 *
 * An actual request from an allowed origin gets `Access-Control-Allow-Origin` (the origin, or `*`)
 * and `Access-Control-Expose-Headers` on every answer, whoever gives it: the gateway's routes, the
 * upstream's answers (whose own Access-Control-* headers are dropped: proxy/forward.ts), and every
 * refusal, since the headers are set in the server's first hook.
 *
 * Once any origin is configured, every answer says `Vary: Origin`, to a request with an allowed
 * origin, another origin or none (whatwg/fetch#564): the answer depends on the Origin, so a shared
 * cache that stored the answer to a request without Origin (no Access-Control-Allow-Origin) must
 * not hand that copy to the listed app, nor the app's copy to another origin. Whoever adds to Vary
 * later merges (request/cache-headers.ts varyWith): the console, the upstream's own Vary on forwarded
 * answers (proxy/forward.ts, and the fast lane, which never sees an Origin but still varies on it).
 * The raw answers written outside fastify carry it with the server's static headers. With no
 * origin configured, nothing at all is added.
 *
 * `Access-Control-Allow-Credentials` is never sent: the API takes bearer tokens in
 * `Authorization`, which a browser sends cross-origin without credentials mode; cookies are never
 * a credential here. So a wildcard origin can never be combined with credentials.
 */
export type Cors = Readonly<{
  /** Some origin is configured: every answer varies on Origin. */
  varyOrigin: boolean;
  /**
   * Called by the server's first onRequest hook (and for the router's own refusals): the
   * allowed origin's headers, on an actual request. Nothing at all when no origin is configured.
   */
  stamp: (request: FastifyRequest, reply: FastifyReply) => void;
  /** The onRequest hook that answers preflights; after the User-Agent guard, before everything else. */
  preflight: (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;
}>;

/** Every method the public API routes (forwarded routes included), in one fixed answer. */
export const CORS_ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
/** Always allowed: the credential, and JSON bodies (not a CORS-safelisted content type). */
export const CORS_BASE_HEADERS = ['authorization', 'content-type'] as const;
/**
 * Request headers allowed besides those when a preflight asks for them: the gateway's own
 * (`x-request-id`, kept when sane so traces join up) and common API request headers a browser
 * app may send to the upstream (content negotiation, conditional requests, idempotency). Any
 * other requested header is left out, so the browser refuses it: never reflected blindly. The
 * headers the gateway sets on the way upstream (x-organization-*, x-authgate-identity,
 * x-forwarded-*) are replaced anyway, and are not listed so no app relies on sending them.
 */
export const CORS_SAFE_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'x-request-id',
  'accept',
  'accept-language',
  'content-language',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'idempotency-key',
  'prefer',
]);
/** What a browser app may read of an answer besides the CORS-safelisted headers. */
export const CORS_EXPOSE_HEADERS = 'x-request-id, ratelimit, ratelimit-policy, retry-after, www-authenticate';
/** How long a browser may keep a preflight's answer (seconds); browsers cap it (Chromium: 7200). */
export const CORS_MAX_AGE = '600';
/**
 * The upstream's own CORS answer headers: dropped from every forwarded answer (proxy/forward.ts),
 * so the gateway's setting is the only one a browser ever sees.
 */
export const UPSTREAM_CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
  'access-control-allow-private-network',
] as const;

const nothing = () => {};

/** A preflight's requested headers that may be allowed, after the two always allowed. */
function allowHeaders(requested: string | undefined): string {
  let allowed = 'authorization, content-type';
  if (requested === undefined || requested === '') return allowed;
  const seen = new Set<string>(CORS_BASE_HEADERS);
  for (const part of requested.split(',')) {
    const name = part.trim().toLowerCase();
    if (CORS_SAFE_REQUEST_HEADERS.has(name) && !seen.has(name)) {
      seen.add(name);
      allowed += `, ${name}`;
    }
  }
  return allowed;
}

export function createCors(origins: readonly string[] | '*'): Cors {
  const any = origins === '*';
  const listed = new Set(any ? [] : origins);
  const none = !any && listed.size === 0;
  /** The Access-Control-Allow-Origin for this Origin, undefined when it is not allowed. */
  const allowOrigin = (origin: string): string | undefined => (any ? '*' : listed.has(origin) ? origin : undefined);

  const stamp = none
    ? nothing
    : (request: FastifyRequest, reply: FastifyReply): void => {
        // Whatever the Origin, or none: the answer depends on it.
        reply.header('vary', 'Origin');
        const origin = request.headers.origin;
        if (origin === undefined) return;
        const allowed = allowOrigin(origin);
        if (allowed === undefined) return;
        // A preflight's answer is the preflight hook's.
        if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) return;
        reply.header('access-control-allow-origin', allowed).header('access-control-expose-headers', CORS_EXPOSE_HEADERS);
      };

  const preflight = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (request.method !== 'OPTIONS') return done();
    const origin = request.headers.origin;
    // Without both, an OPTIONS is an actual request: forwarded where the route table has it.
    if (origin === undefined || request.headers['access-control-request-method'] === undefined) return done();
    const allowed = none ? undefined : allowOrigin(origin);
    if (allowed !== undefined) {
      reply
        .header('access-control-allow-origin', allowed)
        .header('access-control-allow-methods', CORS_ALLOW_METHODS)
        .header('access-control-allow-headers', allowHeaders(request.headers['access-control-request-headers']))
        .header('access-control-max-age', CORS_MAX_AGE)
        .header('vary', 'Origin, Access-Control-Request-Headers');
    } else if (!none) {
      reply.header('vary', 'Origin');
    }
    // Answered here: done() is not called, so nothing after this hook runs for the request.
    reply.code(204).send();
  };

  return { varyOrigin: !none, stamp, preflight };
}

/** A Vary with `Origin` added, merged with what it names (request/cache-headers.ts). */
export function varyWithOrigin(vary: string | string[] | number | undefined): string {
  return varyWith(vary, 'Origin');
}
