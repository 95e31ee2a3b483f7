// The hand-written OTLP body of a batch of light spans (tracing/span-encoder.ts) against the
// official serializer: the same bytes for random spans and batches, and the official serializer's
// own bytes for anything else.
import t from 'tap';
import fc from 'fast-check';
import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type SpanContext } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { TracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { LightSpan, randomId } from '../../src/tracing/light-span.js';
import { encodeLightSpans } from '../../src/tracing/span-encoder.js';

/** Every span ended is kept here (the processor the light spans are handed to). */
function collector() {
  const ended: ReadableSpan[] = [];
  const processor: SpanProcessor = { onStart() {}, onEnd: (span) => void ended.push(span), forceFlush: async () => {}, shutdown: async () => {} };
  return { ended, processor };
}

const official = (spans: ReadableSpan[]) => Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);

// Strings of every length class the protobuf lengths care about (1, 2 and 3 bytes), ASCII or not.
const text = fc.oneof(fc.string({ maxLength: 20 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ minLength: 120, maxLength: 300 }), fc.constantFrom('', 'GET /accounts/*', 'prödüction ✓', 'x'.repeat(17_000)));
const value = fc.oneof(text, fc.boolean(), fc.integer({ min: 0, max: 0x7fffffff }));
const attributes = fc.dictionary(fc.oneof(fc.constantFrom('http.request.method', 'http.route', 'http.response.status_code', 'authgate.decision.reason'), fc.string({ maxLength: 30 })), value, { maxKeys: 8 });
const spanShape = fc.record({
  name: text,
  kind: fc.constantFrom(SpanKind.INTERNAL, SpanKind.SERVER, SpanKind.CLIENT),
  attributes,
  later: attributes,
  parent: fc.constantFrom('none', 'remote', 'remote with state', 'local'),
  status: fc.constantFrom(SpanStatusCode.UNSET, SpanStatusCode.OK, SpanStatusCode.ERROR),
});

t.test('random batches of light spans: the same bytes as the official serializer', async (t) => {
  const resource = resourceFromAttributes({ 'service.name': 'authgate', 'service.version': '1.2.3', 'deployment.environment.name': 'prödüction', 'host.count': 3, 'feature.on': true });
  const scope = { name: 'authgate', version: '1.2.3' };
  fc.assert(
    fc.property(fc.array(spanShape, { minLength: 1, maxLength: 40 }), (shapes) => {
      const { ended, processor } = collector();
      const sink = { processor, resource, scope };
      let local: SpanContext | undefined;
      for (const shape of shapes) {
        const traceId = randomId(16);
        const remote: SpanContext = { traceId, spanId: randomId(8), traceFlags: TraceFlags.SAMPLED, isRemote: true, ...(shape.parent === 'remote with state' && { traceState: createTraceState('vendor=abc,other=1') }) };
        const parent = shape.parent === 'none' ? undefined : shape.parent === 'local' ? local : remote;
        const span = new LightSpan(sink, shape.name, shape.kind, { ...shape.attributes } as Attributes, parent?.traceId ?? traceId, parent, parent?.traceState);
        local = span.spanContext();
        for (const [name, v] of Object.entries(shape.later)) span.setAttribute(name, v);
        span.setStatus({ code: shape.status });
        span.end();
      }
      const mine = encodeLightSpans(ended);
      if (mine === undefined) throw new Error('a batch of light spans was left to the official serializer');
      const theirs = official(ended);
      if (!Buffer.from(mine).equals(theirs)) throw new Error(`bytes differ (${mine.length} against ${theirs.length})`);
    }),
    { numRuns: 300 },
  );
  t.pass('300 batches alike');
});

t.test('the bytes are the caller\'s own: the next batch does not write over them', async (t) => {
  const { ended, processor } = collector();
  const sink = { processor, resource: resourceFromAttributes({ 'service.name': 'authgate' }), scope: { name: 'authgate' } };
  new LightSpan(sink, 'first', SpanKind.SERVER, { a: 'one' }, randomId(16), undefined, undefined).end();
  const first = encodeLightSpans(ended)!;
  const copy = Buffer.from(first);
  ended.length = 0;
  new LightSpan(sink, 'second, and longer', SpanKind.CLIENT, { b: 'two' }, randomId(16), undefined, undefined).end();
  encodeLightSpans(ended);
  t.ok(Buffer.from(first).equals(copy), 'unchanged');
});

t.test('anything but plain light spans of one resource and scope is the official serializer\'s', async (t) => {
  const { ended, processor } = collector();
  const resource = resourceFromAttributes({ 'service.name': 'authgate' });
  const sink = { processor, resource, scope: { name: 'authgate', version: '1' } };
  const light = () => {
    new LightSpan(sink, 'GET', SpanKind.SERVER, { 'http.request.method': 'GET' }, randomId(16), undefined, undefined).end();
    return ended.pop()!;
  };
  const cases: [string, ReadableSpan[]][] = [];
  // A span of the SDK's own tracer.
  const sdk = collector();
  const tracer = new TracerProvider({ resource, spanProcessors: [sdk.processor] }).getTracer('authgate', '1');
  tracer.startSpan('sdk', { kind: SpanKind.SERVER }, trace.setSpanContext(ROOT_CONTEXT, { traceId: randomId(16), spanId: randomId(8), traceFlags: TraceFlags.SAMPLED, isRemote: true })).end();
  cases.push(['an SDK span among light ones', [light(), sdk.ended[0]!]]);
  for (const [what, value] of [['a fraction', 1.5], ['a negative number', -1], ['a whole number past 2^31', 2 ** 40], ['an array', ['a', 'b']]] as const) {
    const span = new LightSpan(sink, 'GET', SpanKind.SERVER, { odd: value as never }, randomId(16), undefined, undefined);
    span.end();
    cases.push([`an attribute of ${what}`, [light(), ended.pop()!]]);
  }
  const other = { processor, resource: resourceFromAttributes({ 'service.name': 'other' }), scope: sink.scope };
  new LightSpan(other, 'GET', SpanKind.SERVER, {}, randomId(16), undefined, undefined).end();
  cases.push(['two resources', [light(), ended.pop()!]]);
  for (const [what, spans] of cases) {
    t.equal(encodeLightSpans(spans), undefined, `${what}: left to the official serializer`);
  }
  t.equal(encodeLightSpans([]), undefined, 'an empty batch too');
});
