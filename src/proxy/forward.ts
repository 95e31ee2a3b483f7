import type { IncomingMessage } from 'node:http';
import replyFrom, { type FastifyReplyFromHooks } from '@fastify/reply-from';
import type { Dispatcher } from 'undici';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Scope } from '../authz/scopes.js';
import type { ForwardedRoute, HttpMethod } from '../config/forwarded-routes.js';
import { HOP_BY_HOP, namedBy, rewriteIdentityHeaders, type ForwardedInfo, type OutgoingHeaders } from './identity-headers.js';
import { pathGuard } from './path-guard.js';
import { BUILTIN_SCOPE_TABLE } from '../route-table/builtin.js';
import { upstreamProblem } from './upstream-errors.js';
import type { IdentityAsserter } from '../identity/assertion.js';
import type { Metrics } from '../observability/metrics.js';
import { Problem } from '../problems.js';
import { RATE_LIMIT_HEADERS, type RateLimitCheck } from '../limits/enforce.js';
import { UPSTREAM_CORS_HEADERS } from '../http/cors.js';
import { privateCacheControl, TARGETED_CACHE_HEADERS, varyWith } from '../http/cache-headers.js';

export type ForwardOptions = Readonly<{
  routes: readonly ForwardedRoute[];
  metrics: Metrics;
  upstreamUrl: string;
  /** The upstream's client (proxy/upstream-pool.ts), shared with the fast lane; its owner closes it. */
  pool: Dispatcher;
  /** X-Forwarded-* for a request, by AUTHGATE_TRUST_PROXY (proxy/forwarded-info.ts), as the fast lane sends them. */
  forwardedInfo: (request: IncomingMessage) => ForwardedInfo;
  /** Signs the identity assertion sent upstream; undefined when AUTHGATE_IDENTITY_ASSERTION=off. */
  identity: IdentityAsserter | undefined;
  /** The credential's rate limit (limits/enforce.ts), before anything else a forwarded request does. */
  rateLimit: RateLimitCheck;
  /** AUTHGATE_CORS_ORIGINS is set: every answer varies on Origin (http/cors.ts). */
  varyOrigin: boolean;
}>;

/**
 * The route table's rows as routes whose handler forwards with @fastify/reply-from: path and
 * query go to the upstream untouched (below the upstream URL's own path, if it has one),
 * bodies stream, identity and forwarding headers are rewritten from request.principal and
 * what the server knows of the client.
 *
 * reply-from directly rather than @fastify/http-proxy over it: the table is fixed and every
 * prefix forwards to itself, so the proxy's per-request rewriting of the path (three URL
 * parses) has nothing to do here, and what it guards against is refused before: pathGuard
 * turns every dot segment, encoded slash or backslash and absolute-form target into a 404
 * ahead of authentication, the router only matches the table's prefixes, and reply-from
 * itself refuses a `..` segment and keeps the upstream's origin.
 */
export async function forwardedRoutes(app: FastifyInstance, opts: ForwardOptions): Promise<void> {
  const rewriteRequestHeaders = (request: FastifyRequest, headers: OutgoingHeaders) => {
    // route-policy guarantees a principal on every forwarded route; this is the last fence.
    if (request.principal === null) throw new Error('forwarded request without a principal');
    request.upstreamStartedAt = performance.now(); // the request leaves for the upstream now
    return rewriteIdentityHeaders(headers, request.principal, request.id, opts.forwardedInfo(request.raw), request.identityAssertion, BUILTIN_SCOPE_TABLE);
  };
  const onError = (reply: FastifyReply, { error }: { error: Error & { statusCode?: number; code?: string } }) => {
    const problem = upstreamProblem(error);
    // A client that went (its body cut short, its connection closed while it waited) fails the
    // upstream request too; that is no failure of the upstream's, as the fast lane counts it.
    const clientGone = reply.request.raw.socket?.destroyed === true;
    if (!clientGone) opts.metrics.upstreamErrors.inc({ route: reply.request.routeOptions.config.routeLabel ?? 'unmatched', kind: problem.reason ?? 'unknown' });
    reply.send(problem);
  };
  // Built once: reply.from() reads these on every request. (reply-from's types also cover HTTP/2
  // servers; this one is HTTP/1, hence the cast.)
  // The gateway's RateLimit headers, when it set them, are the answer's: the upstream's give way.
  // The upstream's Access-Control-* headers always do (http/cors.ts): AUTHGATE_CORS_ORIGINS alone
  // decides which browser apps may read the API, whether or not this request came from one. Its
  // cache headers become private to the credential (upstreamAnswerHeaders).
  const varyOrigin = opts.varyOrigin;
  const rewriteHeaders = (headers: OutgoingHeaders, request: FastifyRequest) => upstreamAnswerHeaders(headers, request.rateLimited, varyOrigin);
  const replyOptions = {
    rewriteRequestHeaders,
    rewriteHeaders,
    onError,
    // An upstream's 503 is the upstream's answer to give, not a reason to retry it.
    retryDelay: () => null,
  } as unknown as FastifyReplyFromHooks;

  // Before authentication (route-level hooks run after this instance-level one).
  app.addHook('onRequest', pathGuard);

  // reply-from resolves the request's path against `base` as a URL, so `/accounts` against
  // `http://svc/v1` would be `http://svc/accounts` (and refused by reply-from as leaving the
  // base). So the base is the origin, and the upstream URL's path is put in front of the
  // request's path here: `/accounts` → `/v1/accounts`, with or without a trailing slash.
  const upstream = new URL(opts.upstreamUrl);
  const basePath = upstream.pathname.replace(/\/+$/, '');
  // One upstream client for the whole table, the fast lane's too (its timeouts are the pool's).
  await app.register(replyFrom, {
    base: upstream.origin,
    disableRequestLogging: true,
    undici: opts.pool as unknown as NonNullable<Parameters<typeof replyFrom>[1]>['undici'],
  });
  // Bodies stream to the upstream as they arrive: nothing on a forwarded route is parsed.
  const passThrough = (_request: FastifyRequest, payload: unknown, done: (err: null, body: unknown) => void) => done(null, payload);
  app.addContentTypeParser('application/json', passThrough);
  app.addContentTypeParser('*', passThrough);

  const forwardAs =
    basePath === ''
      ? function (this: unknown, _request: FastifyRequest, reply: FastifyReply) {
          // No source: reply-from takes the request's own path, and its query as it came.
          return reply.from(undefined, replyOptions);
        }
      : function (this: unknown, request: FastifyRequest, reply: FastifyReply) {
          // The path below the base path; reply-from still adds the query as it came.
          const url = request.raw.url ?? '/';
          const query = url.indexOf('?');
          return reply.from(basePath + (query === -1 ? url : url.slice(0, query)), replyOptions);
        };
  // With the identity assertion: the one kept for the credential, on the hot path without a
  // promise; only when it must be signed (first use, half its lifetime gone) does the request wait.
  const identity = opts.identity;
  const forwardAsserted =
    identity === undefined
      ? forwardAs
      : function (this: unknown, request: FastifyRequest, reply: FastifyReply) {
          const principal = request.principal!;
          const kept = identity.current(principal);
          if (kept !== undefined) {
            request.identityAssertion = kept;
            return forwardAs.call(this, request, reply);
          }
          return identity.sign(principal).then((signed) => {
            // The organization went between authentication and now: its credentials are revoked.
            if (signed === undefined) throw new Problem('credentialInvalid', undefined, 'revoked_token');
            request.identityAssertion = signed;
            return forwardAs.call(this, request, reply);
          });
        };
  // The rate limit first: a refused request costs no signing and never reaches the upstream.
  const rateLimit = opts.rateLimit;
  const forward = function (this: unknown, request: FastifyRequest, reply: FastifyReply) {
    const checked = rateLimit(request, reply);
    return checked === undefined ? forwardAsserted.call(this, request, reply) : checked.then(() => forwardAsserted.call(this, request, reply));
  };
  for (const route of opts.routes) {
    // One fastify route per scope: its methods share it, and route-policy fixes its check once.
    const methodsByScope = new Map<Scope, HttpMethod[]>();
    for (const [method, scope] of Object.entries(route.methods) as [HttpMethod, Scope][]) {
      methodsByScope.set(scope, [...(methodsByScope.get(scope) ?? []), method]);
    }
    // The prefix itself, exactly; with a subtree, also everything below it.
    for (const url of route.subtree ? [route.path, `${route.path}/*`] : [route.path]) {
      for (const [scope, methods] of methodsByScope) {
        app.route({
          method: methods,
          url,
          config: { auth: route.auth, scope, routeLabel: route.subtree ? `${route.path}/*` : route.path },
          // Documentation only (no body, params or response schema: nothing is validated or
          // serialized); http/openapi.ts adds the gateway's own refusals and the upstream's answers.
          schema: describeForwardedRoute(route, url !== route.path, scope),
          handler: forward,
        });
      }
    }
  }
}

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
 * shared cache and CDN honours (http/cache-headers.ts), and `Authorization` in Vary, so the
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

/** The OpenAPI tag of the forwarded routes; http/openapi.ts also tells them apart by it. */
export const UPSTREAM_TAG = 'upstream';

/** A forwarded route as its OpenAPI operations show it: what the upstream's user calls. */
function describeForwardedRoute(route: ForwardedRoute, below: boolean, scope: Scope): FastifySchema {
  const credential = route.auth === 'login-token' ? 'a login token' : `a login token or an API key with the scope \`${scope}\``;
  return {
    tags: [UPSTREAM_TAG],
    summary: below ? `Forwarded to the upstream: any path below ${route.path}` : `Forwarded to the upstream: ${route.path}`,
    description:
      `Needs ${credential}. The request goes to the upstream service with its path and query as they came, ` +
      'its body streamed as it is, without `Authorization`, and with `x-organization-id` (the organization of the ' +
      'credential), `x-organization-scopes` (its scopes, space-separated), `x-authgate-identity` (a JWT the ' +
      'gateway signs naming the organization, verifiable with `/.well-known/jwks.json`; unless turned off), `x-request-id` and `x-forwarded-for`/`-proto`/`-host` set by the gateway. Bodies and answers ' +
      "are the upstream's own; only the gateway's refusals are problems." +
      (route.methods.OPTIONS === undefined
        ? ''
        : ' An `OPTIONS` with `Origin` and `Access-Control-Request-Method` is a CORS preflight, not this operation: ' +
          'the gateway answers it itself (204, no credential needed, see the API description) and never forwards it.'),
  };
}
