/**
 * The OTLP protobuf body of a batch of the gateway's light spans, hand-written for speed (issue 33):
 * byte for byte what the official serializer (@opentelemetry/otlp-transformer's
 * ProtobufTraceSerializer) writes for the same spans — span-encoder.test.ts compares the two on
 * random spans — in about half its time. Measured on the bench machine: the official one ~4.5 µs of
 * CPU per request (a server and a client span), most of tracing's own work at 100 % sampling; this
 * one about 2 µs (one pass, no size estimate first, no id copied to a new array, the attribute keys
 * encoded once).
 *
 * Anything but the light spans' shape (a span of another kind, another resource or scope in the
 * batch, an attribute value other than a string, a boolean or a small whole number) is left to the
 * official serializer, whole batch and all, so nothing the gateway might export is written by a
 * path the test does not cover. This module is OTLP's messages and fields; the wire format's bytes
 * (varints, lengths, strings) are tracing/protobuf-writer.ts's.
 */
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { LightSpan, ORIGIN } from './light-span.js';
import { byte, close, fixed32, hexBytes, key, LEN, open, raw, restart, string, varint, written } from './protobuf-writer.js';

/**
 * A light span's time (performance.now()) as fixed64 nanoseconds since the epoch: the HrTime
 * light-span.ts hrTimeOf() makes of it, written with the official writeHrTimeAsFixed64's
 * arithmetic, without the array.
 */
function fixed64Time(elapsed: number): void {
  let seconds = ORIGIN[0] + Math.trunc(elapsed / 1e3);
  let nanos = ORIGIN[1] + Math.round((elapsed % 1e3) * 1e6);
  if (nanos >= 1e9) {
    nanos -= 1e9;
    seconds += 1;
  }
  const lowSeconds = (seconds & 65535) * 1e9;
  const highSeconds = ((seconds / 65536) >>> 0) * 1e9;
  const low = (lowSeconds >>> 0) + (((highSeconds & 65535) * 65536) >>> 0) + nanos;
  const high = (Math.floor(lowSeconds / 4294967296) + ((highSeconds / 65536) >>> 0) + Math.floor(low / 4294967296)) >>> 0;
  fixed32(low >>> 0);
  fixed32(high);
}

/** Each attribute name's KeyValue key, encoded once (names are the gateway's constants; bounded all the same). */
const names = new Map<string, Buffer>();
/**
 * The attributes as repeated KeyValue; false, half written, at a value this encoder does not write
 * as the official one does (any but a string, a boolean or a whole number from 0 to 2^31 - 1).
 */
function attributes(values: ReadableSpan['attributes'], field: number): boolean {
  for (const name in values) {
    const value = values[name];
    if (typeof value === 'number' ? !(Number.isInteger(value) && value >= 0 && value <= 0x7fffffff) : typeof value !== 'string' && typeof value !== 'boolean') return false;
    byte(key(field, LEN));
    const pair = open(1);
    let encoded = names.get(name);
    if (encoded === undefined) {
      const bytes = Buffer.byteLength(name);
      encoded = Buffer.allocUnsafe(bytes + 6);
      encoded[0] = key(1, LEN);
      let n = 1;
      for (let v = bytes; ; v >>>= 7) {
        if (v <= 127) {
          encoded[n++] = v;
          break;
        }
        encoded[n++] = (v & 127) | 128;
      }
      n += encoded.write(name, n, 'utf8');
      encoded = encoded.subarray(0, n);
      if (names.size < 256) names.set(name, encoded);
    }
    raw(encoded);
    byte(key(2, LEN));
    const any = open(1);
    if (typeof value === 'string') {
      byte(key(1, LEN));
      string(value);
    } else if (typeof value === 'boolean') {
      byte(key(2, 0));
      varint(value ? 1 : 0);
    } else {
      byte(key(3, 0));
      varint(value as number);
    }
    close(any, 1);
    close(pair, 1);
  }
  return true;
}

/** One span; false (half written) if its attributes are not all plain. */
function span(span: LightSpan): boolean {
  const context = span.spanContext();
  byte(key(1, LEN));
  hexBytes(context.traceId);
  byte(key(2, LEN));
  hexBytes(context.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) {
    byte(key(3, LEN));
    string(traceState);
  }
  const parent = span.parentSpanContext;
  if (parent?.spanId) {
    byte(key(4, LEN));
    hexBytes(parent.spanId);
  }
  byte(key(5, LEN));
  string(span.name);
  byte(key(6, 0));
  varint(span.kind + 1);
  byte(key(7, 1));
  fixed64Time(span.startedAt);
  byte(key(8, 1));
  if (span.ended) fixed64Time(span.endedAt);
  else {
    // Never handed to an exporter unended; written as the official serializer writes [0, 0].
    fixed32(0);
    fixed32(0);
  }
  if (!attributes(span.attributes, 9)) return false;
  // The dropped counts (always 0 here), written as the official serializer writes them: always.
  byte(key(10, 0));
  byte(0);
  byte(key(12, 0));
  byte(0);
  byte(key(14, 0));
  byte(0);
  byte(key(15, LEN));
  const status = open(1);
  if (span.status.message) {
    byte(key(2, LEN));
    string(span.status.message);
  }
  byte(key(3, 0));
  varint(span.status.code);
  close(status, 1);
  // Field 16, fixed32: the trace flags, "has is_remote" and whether the parent is remote.
  const flags = (context.traceFlags & 255) | 256 | (parent?.isRemote ? 512 : 0);
  byte(133);
  byte(1);
  fixed32(flags);
  return true;
}

/**
 * The ExportTraceServiceRequest of `spans`, or undefined when the batch is not all light spans of
 * one resource and scope with plain attributes (the caller then asks the official serializer).
 */
export function encodeLightSpans(spans: readonly ReadableSpan[]): Uint8Array | undefined {
  const first = spans[0];
  if (first === undefined) return undefined;
  const resource: Resource = first.resource;
  const scope: InstrumentationScope = first.instrumentationScope;
  const resourceAttributes = resource.attributes;
  // A scope with attributes of its own (a later API's) is the official serializer's to write.
  const scopeExtras = scope as { attributes?: unknown; droppedAttributesCount?: number };
  if (scopeExtras.attributes !== undefined || scopeExtras.droppedAttributesCount) return undefined;
  for (const s of spans) {
    if (!(s instanceof LightSpan) || s.resource !== resource || s.instrumentationScope !== scope) return undefined;
  }
  restart();
  byte(key(1, LEN));
  const resourceSpans = open(3);
  byte(key(1, LEN));
  const resourceMessage = open(1);
  if (!attributes(resourceAttributes, 1)) return undefined;
  byte(key(2, 0));
  byte(0);
  close(resourceMessage, 1);
  byte(key(2, LEN));
  const scopeSpans = open(3);
  byte(key(1, LEN));
  const scopeMessage = open(1);
  byte(key(1, LEN));
  string(scope.name);
  if (scope.version) {
    byte(key(2, LEN));
    string(scope.version);
  }
  close(scopeMessage, 1);
  for (const s of spans as readonly LightSpan[]) {
    byte(key(2, LEN));
    const message = open(2);
    if (!span(s)) return undefined;
    close(message, 2);
  }
  if (scope.schemaUrl) {
    byte(key(3, LEN));
    string(scope.schemaUrl);
  }
  close(scopeSpans, 3);
  if (resource.schemaUrl) {
    byte(key(3, LEN));
    string(resource.schemaUrl);
  }
  close(resourceSpans, 3);
  return written();
}
