/**
 * The gateway's own spans, hand-written for speed (issue 33): a span as the official batch
 * processor and OTLP exporter read it (the SDK's ReadableSpan), with only what the gateway's
 * spans use: attributes it builds itself, a name, a status, an end. Sampling stays the official
 * sampler's (tracing/sdk.ts asks it for each request's root), batching and export the official
 * BatchSpanProcessor and OTLP/HTTP exporter's, so what goes over the wire is theirs.
 *
 * Why not the SDK's Tracer and Span: per sampled request (a server and a client span) they cost
 * about 25 µs of CPU on the bench machine, most of it allocation (a context per span, attribute
 * validation and copies, time offsets, the tracer's own metrics) and the garbage collection of
 * it; these cost a fraction of that (docs/performance.md, issue 33). The attributes here are the
 * gateway's own, of known types (strings and numbers), so the SDK's validation has nothing to
 * catch; no events, no links.
 */
import { randomFillSync } from 'node:crypto';
import { SpanStatusCode, TraceFlags, type Attributes, type AttributeValue, type HrTime, type Link, type SpanContext, type SpanKind, type SpanStatus, type TraceState } from '@opentelemetry/api';
import { hrTimeDuration, millisToHrTime, type InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace';

/** What every span of one tracing shares: where it is exported, and what it says of its origin. */
export type SpanSink = Readonly<{ processor: SpanProcessor; resource: Resource; scope: InstrumentationScope }>;

const NO_LINKS: Link[] = [];
const NO_EVENTS: TimedEvent[] = [];
const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };
const NOT_ENDED: HrTime = [0, 0];

export class LightSpan implements ReadableSpan {
  name: string;
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  /** performance.now() at the start and the end (0: not ended); HrTime made only when asked (hrTimeOf). */
  readonly startedAt: number;
  endedAt: number;
  status: SpanStatus;
  readonly attributes: Attributes;
  ended: boolean;
  // The span is its own SpanContext (spanContext() returns it): no second object per span.
  readonly traceId: string;
  readonly spanId: string;
  readonly traceState: TraceState | undefined;
  declare readonly traceFlags: number;
  private readonly sink: SpanSink;
  // The same for every span: on the prototype (below) or read from the sink, not copied into each
  // of the ~12,000 spans a second made at 100 % sampling under the bench's load.
  declare readonly links: Link[];
  declare readonly events: TimedEvent[];
  declare readonly droppedAttributesCount: number;
  declare readonly droppedEventsCount: number;
  declare readonly droppedLinksCount: number;

  /** A sampled span: `parent` is the remote parent (a client's traceparent) or the gateway's own span. */
  constructor(sink: SpanSink, name: string, kind: SpanKind, attributes: Attributes, traceId: string, parent: SpanContext | undefined, traceState: TraceState | undefined) {
    this.name = name;
    this.kind = kind;
    this.attributes = attributes;
    this.parentSpanContext = parent;
    this.traceId = traceId;
    this.spanId = randomId(8);
    this.traceState = traceState;
    this.sink = sink;
    this.status = UNSET;
    this.ended = false;
    this.endedAt = 0;
    this.startedAt = performance.now();
  }

  get resource(): Resource {
    return this.sink.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.sink.scope;
  }

  get startTime(): HrTime {
    return hrTimeOf(this.startedAt);
  }

  get endTime(): HrTime {
    return this.ended ? hrTimeOf(this.endedAt) : NOT_ENDED;
  }

  /** Asked of an ended span only (the batch processor and the exporter read the start and end). */
  get duration(): HrTime {
    return this.ended ? hrTimeDuration(this.startTime, this.endTime) : NOT_ENDED;
  }

  /** The span itself: its ids, its (sampled) flags and trace state, as a SpanContext has them. */
  spanContext(): SpanContext {
    return this;
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (!this.ended) this.attributes[key] = value;
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (!this.ended) this.status = status;
    return this;
  }

  isRecording(): boolean {
    return !this.ended;
  }

  /** Ends the span once and hands it to the batch processor (which queues it, bounded, for export). */
  end(): void {
    if (this.ended) return;
    this.endedAt = performance.now();
    this.ended = true;
    this.sink.processor.onEnd(this);
  }
}
Object.assign(LightSpan.prototype, { links: NO_LINKS, events: NO_EVENTS, droppedAttributesCount: 0, droppedEventsCount: 0, droppedLinksCount: 0, traceFlags: TraceFlags.SAMPLED });

/**
 * A time read from performance.now() as @opentelemetry/core's hrTime() gives it (the same value, to
 * the nanosecond), with the time origin's part converted once: core's converts it and adds anew
 * for every call (three arrays for one timestamp). A span keeps the number and makes its HrTime
 * only when asked (the batch processor never asks; span-encoder.ts writes the number itself).
 */
export const ORIGIN = millisToHrTime(performance.timeOrigin);
const SECOND_NS = 1e9;
export function hrTimeOf(elapsed: number): HrTime {
  let seconds = ORIGIN[0] + Math.trunc(elapsed / 1e3);
  let nanos = ORIGIN[1] + Math.round((elapsed % 1e3) * 1e6);
  if (nanos >= SECOND_NS) {
    nanos -= SECOND_NS;
    seconds += 1;
  }
  return [seconds, nanos];
}

/**
 * Random ids (lower-case hex, never all zeros, which W3C Trace Context forbids) cut from a pool
 * of random bytes refilled 4 KiB at a time: one fill per ~170 requests instead of one per id.
 */
const ZERO_SPAN = '0'.repeat(16);
const ZERO_TRACE = '0'.repeat(32);
const POOL = Buffer.allocUnsafe(4096);
let used = POOL.length;
export function randomId(bytes: 8 | 16): string {
  for (;;) {
    if (used + bytes > POOL.length) {
      randomFillSync(POOL);
      used = 0;
    }
    const id = POOL.toString('hex', used, used + bytes);
    used += bytes;
    if (id !== ZERO_SPAN && id !== ZERO_TRACE) return id;
  }
}
