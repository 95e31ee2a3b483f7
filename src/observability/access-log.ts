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
  /** The edge proxy's protocol on the authorization port (edge-authz/); absent on the public port. */
  protocol?: string;
};

export type AccessLog = (record: AccessRecord) => void;

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
  return (r) => {
    if (!logger.isLevelEnabled('info')) return;
    let line =
      head + isoTimeNow() + afterTime +
      ',"reqId":' + quote(r.reqId) +
      ',"method":' + quote(r.method) +
      ',"route":' + quote(r.route) +
      ',"status":' + r.status +
      ',"durationMs":' + r.durationMs;
    if (r.orgId !== undefined) line += ',"orgId":' + quote(r.orgId);
    if (r.credentialKind !== undefined) line += ',"credentialKind":' + quote(r.credentialKind);
    if (r.keyId !== undefined) line += ',"keyId":' + quote(r.keyId);
    if (r.authReason !== undefined) line += ',"authReason":' + quote(r.authReason);
    if (r.protocol !== undefined) line += ',"protocol":' + quote(r.protocol);
    destination.write(line + ',"msg":"request"}\n');
  };
}
