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
 * path the test does not cover.
 * One file on purpose: split into a byte writer and the span encoding, a 512-span batch encoded
 * 8–13 % slower (issue 48; docs/performance.md, "Tried and not kept").
 */
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { LightSpan, ORIGIN } from './light-span.js';

/** Field keys (number << 3 | wire type) as single bytes, and field 16's two. */
const LEN = 2;
const key = (field: number, wire: number): number => (field << 3) | wire;

let buffer = Buffer.allocUnsafe(1 << 17);
let at = 0;

function room(bytes: number): void {
  if (at + bytes <= buffer.length) return;
  let size = buffer.length * 2;
  while (size < at + bytes) size *= 2;
  const grown = Buffer.allocUnsafe(size);
  buffer.copy(grown, 0, 0, at);
  buffer = grown;
}

function varint(value: number): void {
  room(5);
  while (value > 127) {
    buffer[at++] = (value & 127) | 128;
    value >>>= 7;
  }
  buffer[at++] = value;
}

function byte(value: number): void {
  room(1);
  buffer[at++] = value;
}

/** A length-delimited field's start: `reserve` bytes kept for its length, fixed up by close(). */
function open(reserve: number): number {
  room(reserve);
  const start = at;
  at += reserve;
  return start;
}

/** Writes the length (minimal varint, as every protobuf writer does) and moves the body when its size differs from the reserve. */
function close(start: number, reserve: number): void {
  const length = at - start - reserve;
  const size = length < 128 ? 1 : length < 16384 ? 2 : length < 2097152 ? 3 : length < 268435456 ? 4 : 5;
  if (size !== reserve) {
    room(size - reserve);
    buffer.copyWithin(start + size, start + reserve, at);
    at += size - reserve;
  }
  let value = length;
  let p = start;
  while (value > 127) {
    buffer[p++] = (value & 127) | 128;
    value >>>= 7;
  }
  buffer[p] = value;
}

/** ASCII (every string the gateway itself makes) byte by byte: for short strings that beats two calls into native code. */
function string(value: string): void {
  const length = value.length;
  if (length < 128) {
    room(length + 1);
    const start = at;
    buffer[at++] = length;
    for (let i = 0; i < length; i++) {
      const code = value.charCodeAt(i);
      if (code > 127) {
        at = start;
        return utf8(value);
      }
      buffer[at++] = code;
    }
    return;
  }
  utf8(value);
}
function utf8(value: string): void {
  const bytes = Buffer.byteLength(value);
  varint(bytes);
  room(bytes);
  at += buffer.write(value, at, bytes, 'utf8');
}

/**
 * Lower-case (or upper-case) hex as bytes, as the official hexToBinary reads it (every id written
 * here is valid hex: the gateway's own, or a parent's the W3C propagator accepted). A table, not
 * comparisons: random hex digits are digits or letters at random, and the branches mispredicted.
 * Measured (512-span batches as the bench's, in-process, two runs, one each way round): 274 -> 250 and
 * 277 -> 257 µs per batch at best, ~0.1 µs per request.
 */
const NIBBLE = new Uint8Array(256);
for (let c = 0; c < 16; c++) NIBBLE['0123456789abcdef'.charCodeAt(c)] = NIBBLE['0123456789ABCDEF'.charCodeAt(c)] = c;
function hexBytes(hex: string): void {
  const bytes = hex.length >>> 1;
  varint(bytes);
  room(bytes);
  for (let i = 0; i < hex.length; i += 2) buffer[at++] = (NIBBLE[hex.charCodeAt(i) & 255]! << 4) | NIBBLE[hex.charCodeAt(i + 1) & 255]!;
}

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
  room(8);
  word(low >>> 0);
  word(high);
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
      // Written once by the writer itself, then kept as a copy and the writer rewound.
      const start = at;
      byte(key(1, LEN));
      string(name);
      encoded = Buffer.from(buffer.subarray(start, at));
      at = start;
      if (names.size < 256) names.set(name, encoded);
    }
    room(encoded.length);
    at += encoded.copy(buffer, at);
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
    room(8);
    word(0);
    word(0);
  }
  if (!attributes(span.attributes, 9)) return false;
  // The dropped counts (always 0 here), written as the official serializer writes them: always.
  room(6);
  buffer[at++] = key(10, 0);
  buffer[at++] = 0;
  buffer[at++] = key(12, 0);
  buffer[at++] = 0;
  buffer[at++] = key(14, 0);
  buffer[at++] = 0;
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
  room(6);
  buffer[at++] = 133;
  buffer[at++] = 1;
  word(flags);
  return true;
}

/** Four bytes, little-endian (room made by the caller). */
function word(value: number): void {
  buffer[at++] = value & 255;
  buffer[at++] = (value >>> 8) & 255;
  buffer[at++] = (value >>> 16) & 255;
  buffer[at++] = value >>> 24;
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
  at = 0;
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
  // A copy: the exporter may still hold (and retry) this batch while the next one is written.
  return Uint8Array.prototype.slice.call(buffer, 0, at);
}
