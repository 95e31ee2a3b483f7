/**
 * authgate as the authorization service of an edge proxy (issue 30): nginx `auth_request`,
 * Traefik and Caddy forward-auth, Envoy `ext_authz` over HTTP and gRPC. Each protocol's adapter
 * turns what its proxy sends into one EdgeRequest and renders the one EdgeDecision in its
 * proxy's terms; the decision itself (the route table, the credential, the scope, the rate
 * limits, the identity headers) is made once, by the same functions as the gateway's own proxy.
 */

import type { TraceIds } from '../tracing/trace-context.js';
import type { TracedAnswer } from '../tracing/tracing.js';

/** Which protocol asked: a bounded label of the metrics and the access line. */
export type EdgeProtocol = 'auth_request' | 'forward_auth' | 'ext_authz_http' | 'ext_authz_grpc';

/** The client's original request, as the edge proxy described it. */
export type EdgeRequest = Readonly<{
  protocol: EdgeProtocol;
  /** The original method (upper case). */
  method: string;
  /** The original origin-form target, path and query as the client sent them (not decoded). */
  target: string;
  /** The client's Authorization values (none, one, or several: several are refused as on the public port). */
  authorization: readonly string[];
  /** The client's address as the trusted proxy reported it (a public route's limit, the audit network). */
  clientAddress: string;
  /**
   * The client's headers as the proxy passed them on, by lower-case name (read for the
   * method-override headers, authz/method-override.ts).
   */
  clientHeaders: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * The client sent a header only authgate sets (proxy/identity-headers.ts isGatewayOnlyHeader):
   * refused, since no proxy can drop such names by prefix (issue 45).
   */
  identityHeaderSent: boolean;
  /** The proxy's request id (x-request-id), when it sent one: carried into the access line. */
  requestId: string | undefined;
  /**
   * The trace the decision is part of (issue 33): the port's own server span with tracing on, else
   * the proxy's `traceparent`; its ids go into the access line. Absent without either.
   */
  trace?: TraceIds | undefined;
  /** With tracing on: ends the request's server span with what was decided (no credential, no query). */
  endSpan?: ((answer: TracedAnswer) => void) | undefined;
}>;

/** Headers of a decision, lower-case names. */
export type EdgeHeaders = Readonly<Record<string, string>>;

export type EdgeAllow = Readonly<{
  allowed: true;
  /**
   * What the proxy must set on the upstream request, overwriting any client copy:
   * x-organization-id, x-organization-scopes, x-authgate-identity (when the assertion is on),
   * ratelimit-policy and ratelimit (for a limited credential). Empty on a public route.
   */
  upstreamHeaders: EdgeHeaders;
  /**
   * The identity headers the proxy must remove from the upstream request because this decision
   * sets no value for them (a public route: the client's own copies must never pass).
   */
  removeHeaders: readonly string[];
  /** Seconds the proxy may cache this allow (AUTHGATE_AUTHZ_CACHE_SECONDS); 0: no-store. */
  cacheSeconds: number;
  /** The matched route's label (metrics, access line). */
  route: string;
}>;

export type EdgeDeny = Readonly<{
  allowed: false;
  /** 400, 401, 403, 404, 405, 429 or 503, as the gateway's own proxy would answer. */
  status: number;
  /** www-authenticate, retry-after, allow, ratelimit-*, content-type (the problem's). */
  headers: EdgeHeaders;
  /** The application/problem+json body. */
  body: string;
  /** The matched route's label; undefined when no route matched. */
  route: string | undefined;
}>;

export type EdgeDecision = EdgeAllow | EdgeDeny;

/** Decides one original request: synchronously on a warm cache, else after one store read. */
export type EdgeDecider = (request: EdgeRequest) => EdgeDecision | Promise<EdgeDecision>;
