import type { Principal } from '../credentials/principal.js';

export type OutgoingHeaders = Record<string, string | string[] | number | undefined>;

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) and the gateway's own credentials: never forwarded.
 * (reply-from has already removed `Connection` and every header it names, before this runs,
 * so a client cannot use `Connection: x-organization-id` to strip the header set below.)
 */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'te', 'trailer', 'upgrade', 'transfer-encoding'];
const ALWAYS_REMOVED = ['authorization', 'proxy-authorization', ...HOP_BY_HOP];
const IDENTITY_PREFIX = 'x-organization-';
const FORWARDED_PREFIX = 'x-forwarded-';

/**
 * The upstream request's headers from the client's: clear every credential and every
 * client-sent identity header first, then set the organization. Pure, so it is tested alone.
 */
export function rewriteIdentityHeaders(
  headers: OutgoingHeaders,
  principal: Principal,
  requestId: string,
  trustForwarded: boolean,
): OutgoingHeaders {
  for (const name of ALWAYS_REMOVED) delete headers[name];
  for (const name in headers) {
    // Header names from node are already lower-case.
    if (name.startsWith(IDENTITY_PREFIX) || (!trustForwarded && (name.startsWith(FORWARDED_PREFIX) || name === 'forwarded'))) {
      delete headers[name];
    }
  }
  headers['x-organization-id'] = principal.orgId;
  headers['x-request-id'] = requestId;
  return headers;
}

/**
 * The upstream's answer on its way back: its hop-by-hop headers (and any it names in
 * `Connection`) describe its connection to the gateway, not the gateway's to the client.
 */
export function removeHopByHopHeaders(headers: OutgoingHeaders): OutgoingHeaders {
  const connection = headers['connection'];
  // Repeated Connection headers arrive as an array; each may name several headers.
  if (Array.isArray(connection)) for (const value of connection) removeNamedIn(headers, String(value));
  else if (connection !== undefined) removeNamedIn(headers, String(connection));
  for (const name of HOP_BY_HOP) delete headers[name];
  return headers;
}

/** Deletes the headers one Connection value names. Every answer has one: `keep-alive` goes without a split. */
function removeNamedIn(headers: OutgoingHeaders, value: string): void {
  if (value === 'keep-alive' || value === 'close') {
    delete headers[value];
    return;
  }
  for (const name of value.split(',')) delete headers[name.trim().toLowerCase()];
}
