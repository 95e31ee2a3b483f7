import type { DestinationStream } from 'pino';
import { isoTimeNow, type Logger } from './logging.js';

/** What one access-log line says: who the request was for, never the credential itself. */
export type AccessRecord = {
  reqId: string;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  orgId: string | undefined;
  credentialKind: string | undefined;
  keyId: string | undefined;
  authReason: string | undefined;
  /** The request's trace (W3C ids, hex): the gateway's span with tracing on, else the client's traceparent. */
  traceId?: string | undefined;
  spanId?: string | undefined;
  /** The edge proxy's protocol on the authorization port (edge-authz/); absent on the public port. */
  protocol?: string;
};

/**
 * HAND-WRITTEN FOR SPEED (issue 30, docs/performance.md "Issue 30: fourth step": −3.8 % CPU per
 * decision on the authorization port): an access line's parts that are the same for every request of one kept answer (issue 30's
 * authorization port: one credential's allow, again and again): everything but the time, the
 * request id and the duration, quoted once (accessLineParts()).
 */
export type AccessLineParts = Readonly<{
  /** From `,"method":` through `,"durationMs":`. */
  middle: string;
  /** From the field after durationMs through the newline. */
  tail: string;
}>;

/** The fields accessLineParts() renders: a record but its request id, duration and trace. */
export type RepeatedRecord = Omit<AccessRecord, 'reqId' | 'durationMs' | 'traceId' | 'spanId'>;

export type AccessLog = ((record: AccessRecord) => void) & {
  /** The same line as for the record the parts were made of with this reqId and durationMs; written without quoting those parts again. */
  readonly repeated?: (parts: AccessLineParts, reqId: string, durationMs: number) => void;
};

/** pino's number for info: the access line is an info line like any other. */
const INFO = 30;

/** Nothing JSON would escape: printable ASCII without `"` and `\`. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A JSON string; almost every value is plain, and that check is cheaper than JSON.stringify. */
function quote(value: string): string {
  return PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
}

/**
 * The one line per request, written straight to the log's destination in pino's own format
 * (`level`, `time`, the logger's bindings, the fields, `msg: "request"`), so it reads and parses
 * like every other line.
 *
 * Not through pino: pino serializes an object by walking its keys (`for…in`, keyed loads on
 * objects of every shape the gateway logs), and once per request that walk cost more than all
 * of authgate's own work on the request, partly through what it does to the engine's shared
 * property caches (docs/performance.md). Here the shape is fixed and the line is one template.
 * Every string is quoted as JSON (quote() below), so no value (a client's request id, a record
 * from Redis) can break out of its string; numbers are the gateway's own.
 *
 * The fields are the gateway's own values, never a header or a body: nothing here is for
 * pino's redaction to find, and nothing may be added that would be.
 */
export function createAccessLog(logger: Logger, destination: DestinationStream): AccessLog {
  const context = JSON.stringify(logger.bindings()).slice(1, -1);
  const head = `{"level":${INFO},"time":"`;
  const afterTime = context === '' ? '"' : `",${context}`;
  const log = (r: AccessRecord): void => {
    if (!logger.isLevelEnabled('info')) return;
    let line =
      head + isoTimeNow() + afterTime +
      ',"reqId":' + quote(r.reqId) +
      middleOf(r) + r.durationMs + principalFields(r);
    // Hex by construction (tracing/trace-context.ts, or the SDK's ids): no quoting needed. The
    // OpenTelemetry log data model's names, so a log backend links the line to its trace.
    if (r.traceId !== undefined) line += ',"trace_id":"' + r.traceId + '","span_id":"' + r.spanId + '"';
    destination.write(line + protocolField(r) + END);
  };
  const repeated = (parts: AccessLineParts, reqId: string, durationMs: number): void => {
    if (!logger.isLevelEnabled('info')) return;
    destination.write(head + isoTimeNow() + afterTime + ',"reqId":' + quote(reqId) + parts.middle + durationMs + parts.tail);
  };
  return Object.assign(log, { repeated });
}

const END = ',"msg":"request"}\n';

/** `,"method":…,"route":…,"status":…,"durationMs":` */
const middleOf = (r: RepeatedRecord): string => ',"method":' + quote(r.method) + ',"route":' + quote(r.route) + ',"status":' + r.status + ',"durationMs":';

/** `,"orgId":…,"credentialKind":…,"keyId":…,"authReason":…`, each where present. */
function principalFields(r: RepeatedRecord): string {
  let fields = '';
  if (r.orgId !== undefined) fields += ',"orgId":' + quote(r.orgId);
  if (r.credentialKind !== undefined) fields += ',"credentialKind":' + quote(r.credentialKind);
  if (r.keyId !== undefined) fields += ',"keyId":' + quote(r.keyId);
  if (r.authReason !== undefined) fields += ',"authReason":' + quote(r.authReason);
  return fields;
}

const protocolField = (r: RepeatedRecord): string => (r.protocol === undefined ? '' : ',"protocol":' + quote(r.protocol));

/** The parts of a line that repeat (AccessLineParts), rendered by the full line's own pieces (createAccessLog). */
export function accessLineParts(r: RepeatedRecord): AccessLineParts {
  return { middle: middleOf(r), tail: principalFields(r) + protocolField(r) + END };
}
