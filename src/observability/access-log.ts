import type { DestinationStream } from 'pino';
import type { LogSink } from './log-sink.js';
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
 * request id and the duration, quoted once (accessLineParts()). Its fifth step ("Issue 30: fifth
 * step"): the parts kept as bytes too, and the repeated line written as bytes into the log sink's
 * batch (LogSink.room), not as a string the sink joins and encodes: in-process, a repeated line
 * through the sink to /dev/null 665–992 → 278–306 ns (a microbenchmark, both builds, two runs).
 */
export type AccessLineParts = Readonly<{
  /** From `,"method":` through `,"durationMs":`. */
  middle: string;
  /** From the field after durationMs through the newline. */
  tail: string;
  /** `middle` and `tail` in UTF-8, for a sink that takes bytes. */
  middleBytes: Buffer;
  tailBytes: Buffer;
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
  // The log sink's batch, where the repeated line is written as bytes (LogSink.room).
  const sink = destination as DestinationStream & Pick<LogSink, 'room'>;
  const headBytes = Buffer.from(head);
  const beforeIdBytes = Buffer.from(afterTime + ',"reqId":');
  /** The bytes of a line but its variable parts: head, time, the bytes around the id, the number. */
  const fixedBytes = headBytes.length + TIME_BYTES + beforeIdBytes.length + NUMBER_BYTES;
  // The time's bytes, made again when its text changes (once per millisecond at most).
  let timeText = '';
  const timeBytes = Buffer.alloc(TIME_BYTES);
  const repeated = (parts: AccessLineParts, reqId: string, durationMs: number): void => {
    if (!logger.isLevelEnabled('info')) return;
    const time = isoTimeNow();
    if (sink.room !== undefined && time.length === TIME_BYTES) {
      // A plain id is its characters between quotes; any other is JSON.stringify's (≤ 6 bytes a unit).
      const plain = PLAIN.test(reqId);
      const batch = sink.room(fixedBytes + (plain ? reqId.length : 6 * reqId.length) + 2 + parts.middleBytes.length + parts.tailBytes.length);
      if (batch !== undefined) {
        if (time !== timeText) {
          timeBytes.write(time, 0, 'latin1');
          timeText = time;
        }
        const buf = batch.buf;
        let at = batch.pos;
        buf.set(headBytes, at);
        at += headBytes.length;
        buf.set(timeBytes, at);
        at += TIME_BYTES;
        buf.set(beforeIdBytes, at);
        at += beforeIdBytes.length;
        if (plain) {
          // Printable ASCII: each character is its byte (a loop costs less than a native write for an id's length).
          buf[at++] = 0x22; // "
          for (let i = 0; i < reqId.length; i++) buf[at++] = reqId.charCodeAt(i);
          buf[at++] = 0x22;
        } else at += buf.write(JSON.stringify(reqId), at);
        buf.set(parts.middleBytes, at);
        at += parts.middleBytes.length;
        at = writeMillis(buf, at, durationMs);
        buf.set(parts.tailBytes, at);
        batch.pos = at + parts.tailBytes.length;
        return;
      }
    }
    destination.write(head + time + afterTime + ',"reqId":' + quote(reqId) + parts.middle + durationMs + parts.tail);
  };
  return Object.assign(log, { repeated });
}

const END = ',"msg":"request"}\n';
/** isoTimeNow()'s length (`2026-11-26T14:30:00.000Z`). */
const TIME_BYTES = 24;
/** The longest text of a JS number (`-1.2345678901234567e-308`). */
const NUMBER_BYTES = 24;
/** Below this, a count of thousandths is exact and its shortest text is its decimal (below). */
const EXACT_THOUSANDTHS = 1e15;

/**
 * Writes `String(ms)` at `at` for a duration rounded to thousandths (as the access line's are),
 * without making the string: its integer part, then up to three decimals without trailing zeros.
 * That is String()'s text for such a value: `k / 1000` (k < 1e15) is the double nearest the
 * decimal k/1000, no other decimal as short maps to the same double, and String() writes the
 * shortest. Any other value (negative, not a whole thousandth, huge) is written by String() itself.
 * Tested against String() (test/observability/access-log.test.ts).
 */
export function writeMillis(buf: Buffer, at: number, ms: number): number {
  const thousandths = Math.round(ms * 1000);
  if (!(thousandths >= 0 && thousandths < EXACT_THOUSANDTHS && thousandths / 1000 === ms)) return at + buf.write(String(ms), at);
  const whole = Math.floor(thousandths / 1000);
  let fraction = thousandths - whole * 1000;
  // The whole part's digits, most significant first.
  let digits = 1;
  for (let rest = whole; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  for (let i = digits - 1, rest = whole; i >= 0; i--, rest = Math.floor(rest / 10)) buf[at + i] = 0x30 + (rest % 10);
  at += digits;
  if (fraction === 0) return at;
  buf[at++] = 0x2e; // .
  for (let unit = 100; fraction > 0; unit /= 10) {
    const digit = Math.floor(fraction / unit);
    buf[at++] = 0x30 + digit;
    fraction -= digit * unit;
  }
  return at;
}

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
  const middle = middleOf(r);
  const tail = principalFields(r) + protocolField(r) + END;
  return { middle, tail, middleBytes: Buffer.from(middle), tailBytes: Buffer.from(tail) };
}
