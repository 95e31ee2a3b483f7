import { isGatewayOnlyHeader } from '../../proxy/identity-headers.js';
import { parseTraceparent } from '../../tracing/trace-context.js';
import type { EdgeDecision, EdgeHeaders, EdgeRequest } from '../decision.js';
import { lastForwardedAddress } from '../forwarded-for.js';

/**
 * Envoy's ext_authz gRPC contract in authgate's terms, both ways, with no I/O: a CheckRequest (as
 * @grpc/proto-loader decodes it, field names as in the .proto) becomes one EdgeRequest, and the
 * one EdgeDecision becomes a CheckResponse. The wire rules come from the vendored protos
 * (protos/envoy/service/auth/v3/external_auth.proto) and Envoy's ext_authz_grpc_impl.cc:
 * status.code 0 allows, any other code denies with denied_response.status (403 when unset); an
 * RPC error is NOT a denial but an error, which Envoy turns into its status_on_error (403 by
 * default) — so a store outage must be answered as a denied 503, never as an RPC error.
 */

/** The part of a decoded CheckRequest this module reads; everything optional, as on the wire. */
export type CheckRequestMessage = {
  attributes?: {
    source?: { address?: { socket_address?: { address?: string } } };
    request?: {
      http?: {
        id?: string;
        method?: string;
        path?: string;
        headers?: Record<string, string>;
        header_map?: { headers?: ReadonlyArray<{ key?: string; value?: string; raw_value?: Uint8Array | string }> };
      };
    };
  };
};

/** config.core.v3.HeaderValueOption as proto-loader encodes it from a plain object. */
export type HeaderValueOptionMessage = {
  header: { key: string; value: string };
  /** Deprecated BoolValue; false = overwrite. Kept beside append_action for Envoy before 1.22. */
  append: { value: boolean };
  append_action: 'OVERWRITE_IF_EXISTS_OR_ADD';
};

export type CheckResponseMessage = {
  status: { code: number; message: string };
  ok_response?: { headers: HeaderValueOptionMessage[]; headers_to_remove: string[] };
  denied_response?: { status: { code: number }; headers: HeaderValueOptionMessage[]; body: string };
};

/** google.rpc.Code values (google/rpc/code.proto). */
export const GrpcCode = {
  OK: 0,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/**
 * The rpc code of a refusal, after Google's HTTP↔gRPC table (AIP-193). Envoy only looks at
 * "zero or not"; the code is for the proxy's logs and for gRPC-aware tooling. 405 has no entry
 * in that table: UNIMPLEMENTED (the route does not implement the method) is the closest.
 */
export function grpcCodeOf(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
      return GrpcCode.INVALID_ARGUMENT;
    case 401:
      return GrpcCode.UNAUTHENTICATED;
    case 403:
      return GrpcCode.PERMISSION_DENIED;
    case 404:
      return GrpcCode.NOT_FOUND;
    case 405:
      return GrpcCode.UNIMPLEMENTED;
    case 429:
      return GrpcCode.RESOURCE_EXHAUSTED;
    case 503:
      return GrpcCode.UNAVAILABLE;
    default:
      return httpStatus >= 500 ? GrpcCode.INTERNAL : GrpcCode.UNKNOWN;
  }
}

/** Identity header families a client must never smuggle past the decision (the upstream trusts them). */
const IDENTITY_FAMILY = /^x-(?:organization|authgate)-/;

export type MappingOptions = {
  /** AUTHGATE_AUTHZ_REMOVE_CREDENTIAL: also strip `authorization` from an allowed request. */
  removeCredential: boolean;
};

/**
 * The Authorization values of the request. Envoy's `headers` map merges repeated headers with
 * ",", and a bearer token's characters (RFC 6750 b64token) never include ",": a comma means
 * several values, which the decider refuses as a duplicate exactly as the public port does.
 * With `encode_raw_headers` Envoy sends `header_map` instead, one entry per occurrence.
 */
function authorizationValues(http: NonNullable<NonNullable<CheckRequestMessage['attributes']>['request']>['http']): string[] {
  const values: string[] = [];
  const merged = http?.headers?.['authorization'];
  if (typeof merged === 'string') {
    for (const part of merged.split(',')) values.push(part.trim());
    return values;
  }
  for (const entry of http?.header_map?.headers ?? []) {
    if (entry.key?.toLowerCase() !== 'authorization') continue;
    values.push(headerMapValue(entry).trim());
  }
  return values;
}

function headerMapValue(entry: { value?: string; raw_value?: Uint8Array | string }): string {
  if (typeof entry.value === 'string' && entry.value !== '') return entry.value;
  const raw = entry.raw_value;
  if (raw === undefined) return '';
  return typeof raw === 'string' ? raw : Buffer.from(raw).toString('latin1');
}

/** Every request header name the client sent, lower case (map keys, or header_map entries). */
function headerNames(http: NonNullable<NonNullable<CheckRequestMessage['attributes']>['request']>['http']): string[] {
  const names = Object.keys(http?.headers ?? {}).map((name) => name.toLowerCase());
  for (const entry of http?.header_map?.headers ?? []) if (entry.key !== undefined) names.push(entry.key.toLowerCase());
  return names;
}

/**
 * The client's headers by lower-case name: Envoy's `headers` map as it is (its keys are lower
 * case), or the `header_map` entries, a repeated one joined with ", " as node joins them.
 */
function clientHeadersOf(http: NonNullable<NonNullable<CheckRequestMessage['attributes']>['request']>['http']): Readonly<Record<string, string>> {
  if (http?.headers !== undefined) return http.headers;
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const entry of http?.header_map?.headers ?? []) {
    if (entry.key === undefined) continue;
    const name = entry.key.toLowerCase();
    const value = headerMapValue(entry);
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return headers;
}

function headerValue(http: NonNullable<NonNullable<CheckRequestMessage['attributes']>['request']>['http'], name: string): string | undefined {
  const value = http?.headers?.[name];
  if (typeof value === 'string') return value;
  for (const entry of http?.header_map?.headers ?? []) if (entry.key?.toLowerCase() === name) return headerMapValue(entry);
  return undefined;
}

/**
 * The client's address: `attributes.source.address`, which Envoy fills with the downstream
 * peer (after its own x-forwarded-for handling when use_remote_address/xff_num_trusted_hops are
 * set); else the last x-forwarded-for entry, the one Envoy itself appended (earlier entries are
 * the client's to write) when it is an address (forwarded-for.ts, the HTTP endpoints' rule);
 * else the transport peer (the proxy).
 */
function clientAddressOf(message: CheckRequestMessage, transportPeer: string): string {
  const source = message.attributes?.source?.address?.socket_address?.address;
  if (typeof source === 'string' && source !== '') return source;
  const forwarded = headerValue(message.attributes?.request?.http, 'x-forwarded-for');
  return (forwarded === undefined ? undefined : lastForwardedAddress(forwarded)) ?? transportPeer;
}

/** The EdgeRequest of a CheckRequest; `transportPeer` is the calling proxy's address. */
export function edgeRequestOf(message: CheckRequestMessage, transportPeer: string): EdgeRequest {
  const http = message.attributes?.request?.http;
  const id = http?.id;
  const requestId = typeof id === 'string' && id !== '' ? id : headerValue(http, 'x-request-id');
  return {
    protocol: 'ext_authz_grpc',
    method: (http?.method ?? '').toUpperCase(),
    // `path` carries the query (Envoy leaves `query` and `fragment` empty): the target as sent.
    target: http?.path ?? '',
    authorization: authorizationValues(http),
    clientHeaders: clientHeadersOf(http),
    identityHeaderSent: headerNames(http).some(isGatewayOnlyHeader),
    clientAddress: clientAddressOf(message, transportPeer),
    requestId: requestId === '' ? undefined : requestId,
    // Envoy passes the request's traceparent in the checked headers: its ids go into the access line.
    trace: parseTraceparent(headerValue(http, 'traceparent')),
  };
}

function headerOptions(headers: EdgeHeaders): HeaderValueOptionMessage[] {
  return Object.entries(headers).map(([key, value]) => ({
    header: { key, value },
    append: { value: false },
    append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
  }));
}

/**
 * The CheckResponse of a decision. On an allow, headers_to_remove lists the identity headers the
 * decision leaves unset (a public route), every client copy of the x-organization-* and
 * x-authgate-* families the decision does not overwrite itself (the upstream trusts those names),
 * and the credential when configured. `message` is the original request, to see the client's
 * header names.
 */
export function checkResponseOf(decision: EdgeDecision, message: CheckRequestMessage, options: MappingOptions): CheckResponseMessage {
  if (!decision.allowed) {
    return {
      status: { code: grpcCodeOf(decision.status), message: `denied: ${decision.status}` },
      denied_response: { status: { code: decision.status }, headers: headerOptions(decision.headers), body: decision.body },
    };
  }
  const set = new Set(Object.keys(decision.upstreamHeaders));
  const remove = new Set<string>();
  for (const name of decision.removeHeaders) if (!set.has(name)) remove.add(name);
  for (const name of headerNames(message.attributes?.request?.http)) {
    if (IDENTITY_FAMILY.test(name) && !set.has(name)) remove.add(name);
  }
  if (options.removeCredential) remove.add('authorization');
  return {
    status: { code: GrpcCode.OK, message: '' },
    ok_response: { headers: headerOptions(decision.upstreamHeaders), headers_to_remove: [...remove] },
  };
}
