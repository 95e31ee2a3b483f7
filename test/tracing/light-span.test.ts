// The gateway's own light spans (tracing/light-span.ts) against the SDK tracer's: the same span,
// exported by the official OTLP exporter to a real receiver on loopback, decodes the same but for
// its own span id and times.
import t from 'tap';
import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { LightSpan, randomId } from '../../src/tracing/light-span.js';
import { eventually } from '../helpers/gateway.js';
import { startOtlpReceiver, type ExportedSpan } from '../helpers/otlp-receiver.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

t.test('a light span is exported as the SDK would export the same span', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const exporter = () => new OTLPTraceExporter({ url: `${receiver.url}/v1/traces` });
  const resource = resourceFromAttributes({ 'service.name': 'authgate', 'service.version': '1.2.3' });
  const parent: SpanContext = { traceId: TRACE, spanId: PARENT, traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: createTraceState('vendor=abc') };

  // The same calls on both: the server span of a request refused by a failed upstream.
  type Playable = { updateName(name: string): unknown; setAttribute(key: string, value: string | number): unknown; setStatus(status: { code: SpanStatusCode }): unknown; end(): void };
  const play = (span: Playable) => {
    span.updateName('GET /accounts/*');
    span.setAttribute('http.route', '/accounts/*');
    span.setAttribute('http.response.status_code', 502);
    span.setAttribute('error.type', '502');
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    span.setAttribute('after.end', 'ignored');
  };
  const sdkProcessor = new SimpleSpanProcessor({ exporter: exporter() });
  const tracer = new TracerProvider({ resource, spanProcessors: [sdkProcessor] }).getTracer('authgate', '1.2.3');
  play(tracer.startSpan('GET', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'GET', 'url.scheme': 'http' } }, trace.setSpanContext(ROOT_CONTEXT, parent)));
  await sdkProcessor.forceFlush();
  t.ok(await eventually(async () => receiver.spans.length === 1, 10_000), 'the SDK\'s span received');

  const lightProcessor = new SimpleSpanProcessor({ exporter: exporter() });
  const light = new LightSpan({ processor: lightProcessor, resource, scope: { name: 'authgate', version: '1.2.3' } }, 'GET', SpanKind.SERVER, { 'http.request.method': 'GET', 'url.scheme': 'http' }, TRACE, parent, parent.traceState);
  play(light);
  t.notOk(light.isRecording(), 'ended');
  await lightProcessor.forceFlush();
  t.ok(await eventually(async () => receiver.spans.length === 2, 10_000), 'the light span received');

  const [sdk, mine] = receiver.spans as [ExportedSpan, ExportedSpan];
  t.match(mine.spanId, /^[0-9a-f]{16}$/);
  t.not(mine.spanId, sdk.spanId);
  t.same({ ...mine, spanId: '' }, { ...sdk, spanId: '' }, 'the same trace, parent, trace state, name, kind, attributes, status and resource');
  t.equal(mine.parentSpanId, PARENT);
  t.equal(mine.traceState, 'vendor=abc');
  await Promise.all([sdkProcessor.shutdown(), lightProcessor.shutdown()]);
});

t.test('random ids: lower-case hex of their length, each new', async (t) => {
  const seen = new Set<string>();
  const bad: string[] = [];
  for (let i = 0; i < 2000; i++) {
    const span = randomId(8);
    const traceId = randomId(16);
    if (!/^[0-9a-f]{16}$/.test(span) || !/^[0-9a-f]{32}$/.test(traceId)) bad.push(span, traceId);
    seen.add(span).add(traceId);
  }
  t.same(bad, [], 'all hex of their length (past several refills of the pool)');
  t.equal(seen.size, 4000, 'no repeats');
});

t.test('a light span\'s times: the HrTime core\'s hrTime() makes of the same performance.now()', async (t) => {
  const { hrTime } = await import('@opentelemetry/core');
  const { hrTimeOf } = await import('../../src/tracing/light-span.js');
  const differ: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const at = performance.now() + i * 13.7173 + (i % 7) * 0.000_999;
    const [a, b] = [hrTime(at), hrTimeOf(at)];
    if (a[0] !== b[0] || a[1] !== b[1]) differ.push(at);
  }
  t.same(differ, [], 'the same to the nanosecond');
});
