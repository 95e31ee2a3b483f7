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
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(?:-|$)/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';

/** The ids of a `traceparent` value; undefined when it is absent, repeated or malformed. */
export function parseTraceparent(value: string | string[] | undefined): TraceIds | undefined {
  if (typeof value !== 'string' || value.length < 55) return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (match === null || match[1] === 'ff') return undefined;
  // Version 00 is exactly 55 characters; a later version may append fields after a dash.
  if (match[1] === '00' && value.trim().length !== 55) return undefined;
  const traceId = match[2]!;
  const spanId = match[3]!;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId };
}

/** The client's trace ids of a request, when it sent a valid `traceparent`. */
export function incomingTraceIds(request: IncomingMessage): TraceIds | undefined {
  const header = request.headers.traceparent;
  return header === undefined ? undefined : parseTraceparent(header);
}
