// The upstream request's headers: credentials and client identity claims out, the gateway's identity and X-Forwarded-* in.
import { effectiveScopesHeader } from '../plans/effective-scopes.js';
import type { CompiledPlan } from '../route-table/types.js';
import type { ScopeTable } from '../authz/scopes.js';
import type { Principal } from '../credentials/principal.js';

export type OutgoingHeaders = Record<string, string | string[] | number | undefined>;

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) and the gateway's own credentials: never forwarded.
 * (reply-from has already removed `Connection` and every header it names, before this runs,
 * so a client cannot use `Connection: x-organization-id` to strip the header set below.)
 * Also `Expect`: the gateway's own server answers `100-continue` itself (when the body is first
 * read: request/admission.ts), and undici refuses to send the header at all.
 * And `Forwarded` (RFC 7239) and `X-Real-IP`: client claims of its address that upstream
 * frameworks read; the gateway writes X-Forwarded-* of its own instead.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'te', 'trailer', 'upgrade', 'transfer-encoding']);
const ALWAYS_REMOVED = new Set(['authorization', 'proxy-authorization', 'expect', 'forwarded', 'x-real-ip', ...HOP_BY_HOP]);
const IDENTITY_PREFIX = 'x-organization-';
/** The gateway's own headers (x-authgate-identity and any later): never a client's. */
const GATEWAY_PREFIX = 'x-authgate-';
const FORWARDED_PREFIX = 'x-forwarded-';

/**
 * A lower-case header name only the gateway may set on the upstream request: `x-organization-*`,
 * `x-authgate-*`, or any name with an underscore (see rewriteIdentityHeaders). The public port
 * drops a client's; the authorization port refuses a request carrying one (edge-authz/), since
 * a proxy cannot drop names by prefix.
 */
export function isGatewayOnlyHeader(name: string): boolean {
  return name.startsWith(IDENTITY_PREFIX) || name.startsWith(GATEWAY_PREFIX) || name.includes('_');
}

/** What the gateway itself tells the upstream about the client: X-Forwarded-For, -Proto, -Host. */
export type ForwardedInfo = Readonly<{
  /** The client address the gateway used and the trusted proxies after it, in X-Forwarded-For order. */
  for: string;
  proto: 'http' | 'https';
  /** The Host the client asked for (as a trusted proxy reported it); undefined when there was none. */
  host: string | undefined;
}>;

/*
 * Both functions copy what passes into a new object rather than `delete` what does not: a
 * delete turns the headers object into a slow dictionary for every later step of the request.
 */

/**
 * The upstream request's headers from the client's: without any credential, client-sent
 * identity (`x-organization-*`, `x-authgate-*`) or forwarding header, or header name with an
 * underscore; then with the gateway's X-Forwarded-*, the organization and its signed identity. Pure, so it is tested alone.
 *
 * Underscores: CGI-style servers (WSGI, Rack, PHP, nginx with `underscores_in_headers`) turn
 * `-` into `_`, so `x_organization_id` or `X-Organization_Id` would land in the same variable
 * as the real `x-organization-id`. Every name with an underscore is dropped, as nginx does by
 * default: no standard header has one.
 */
export function rewriteIdentityHeaders(
  headers: OutgoingHeaders,
  /** null on a public route: the client's identity headers go all the same, and none is written. */
  principal: Principal | null,
  requestId: string,
  forwarded: ForwardedInfo,
  /** The signed identity (identity/assertion.ts), when the gateway sends one. */
  identityAssertion: string | null,
  /** The live table's scopes: `x-organization-scopes` lists the held ones it declares. */
  scopes: ScopeTable,
  /** The organization's plan under that table (undefined: none): the header lists only its scopes. */
  plan?: CompiledPlan,
): OutgoingHeaders {
  const out: OutgoingHeaders = {};
  for (const name in headers) {
    // Header names from node are already lower-case.
    if (ALWAYS_REMOVED.has(name) || isGatewayOnlyHeader(name) || name.startsWith(FORWARDED_PREFIX)) continue;
    out[name] = headers[name];
  }
  out['x-forwarded-for'] = forwarded.for;
  out['x-forwarded-proto'] = forwarded.proto;
  if (forwarded.host !== undefined) out['x-forwarded-host'] = forwarded.host;
  if (principal !== null) {
    out['x-organization-id'] = principal.orgId;
    out['x-organization-scopes'] = effectiveScopesHeader(principal.scopes, scopes, plan);
  }
  if (identityAssertion !== null) out['x-authgate-identity'] = identityAssertion;
  out['x-request-id'] = requestId;
  return out;
}

/**
 * The upstream's answer on its way back: its hop-by-hop headers (and any it names in
 * `Connection`) describe its connection to the gateway, not the gateway's to the client.
 */
export function removeHopByHopHeaders(headers: OutgoingHeaders): OutgoingHeaders {
  const named = namedBy(headers['connection']);
  const out: OutgoingHeaders = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || named?.has(name) === true) continue;
    out[name] = headers[name];
  }
  return out;
}

/** The headers a Connection header names. Nearly every answer says just `keep-alive`: no split then. */
export function namedBy(connection: OutgoingHeaders[string]): ReadonlySet<string> | undefined {
  if (connection === undefined || connection === 'keep-alive') return undefined;
  const names = new Set<string>();
  // Repeated Connection headers arrive as an array; each may name several headers.
  for (const value of Array.isArray(connection) ? connection : [connection]) {
    for (const name of String(value).split(',')) names.add(name.trim().toLowerCase());
  }
  return names;
}
