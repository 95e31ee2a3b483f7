/**
 * The W3C `traceparent` of a request, read without the OpenTelemetry packages: with tracing off
 * the access line and the request's log lines still carry the client's trace and span ids
 * (issue 33), so the logs of a request can be found from its trace. Read only when the header is
 * there: a request without one costs a property read.
 */
import type { IncomingMessage } from 'node:http';

/** The ids a log line carries: lower-case hex, as in `traceparent`. */
export type TraceIds = Readonly<{ traceId: string; spanId: string }>;

/** version-traceid-parentid-flags (W3C Trace Context §3.2); version ff is invalid. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-|$)/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';

/** The ids of a `traceparent` value; undefined when it is absent, repeated or malformed. */
export function parseTraceparent(value: string | string[] | undefined): TraceIds | undefined {
  const match = matchTraceparent(value);
  return match === undefined ? undefined : { traceId: match[2]!, spanId: match[3]! };
}

/**
 * Whether a valid `traceparent` says its trace is sampled (the flags' lowest bit); undefined when
 * there is none, or none valid (the request is then a root). Read before the SDK is asked
 * (tracing/sdk.ts): a parent-based sampler drops what an unsampled parent starts, decided here.
 */
export function traceparentSampled(value: string | string[] | undefined): boolean | undefined {
  const match = matchTraceparent(value);
  return match === undefined ? undefined : (Number.parseInt(match[4]!, 16) & 1) === 1;
}

function matchTraceparent(value: string | string[] | undefined): RegExpExecArray | undefined {
  if (typeof value !== 'string' || value.length < 55) return undefined;
  const trimmed = value.trim();
  const match = TRACEPARENT.exec(trimmed);
  if (match === null || match[1] === 'ff') return undefined;
  // Version 00 is exactly 55 characters; a later version may append fields after a dash.
  if (match[1] === '00' && trimmed.length !== 55) return undefined;
  if (match[2] === ZERO_TRACE || match[3] === ZERO_SPAN) return undefined;
  return match;
}

/** The client's trace ids of a request, when it sent a valid `traceparent`. */
export function incomingTraceIds(request: IncomingMessage): TraceIds | undefined {
  const header = request.headers.traceparent;
  return header === undefined ? undefined : parseTraceparent(header);
}
