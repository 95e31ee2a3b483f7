// The traceparent read without the SDK (tracing off), and the sampler read from OTEL_TRACES_SAMPLER.
import t from 'tap';
import { parseTraceparent } from '../../src/tracing/trace-context.js';
import { samplerFrom } from '../../src/tracing/sdk.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

t.test('traceparent: the ids of a valid one, nothing of anything else', async (t) => {
  t.same(parseTraceparent(`00-${TRACE}-${SPAN}-01`), { traceId: TRACE, spanId: SPAN });
  t.same(parseTraceparent(`00-${TRACE}-${SPAN}-00`), { traceId: TRACE, spanId: SPAN }, 'a sampled-out trace is still a trace to log');
  t.same(parseTraceparent(`01-${TRACE}-${SPAN}-01-extra`), { traceId: TRACE, spanId: SPAN }, 'a later version may append fields');
  for (const bad of [
    undefined,
    '',
    `00-${TRACE}-${SPAN}-01-extra`, // version 00 is exactly 55 characters
    `ff-${TRACE}-${SPAN}-01`,
    `00-${'0'.repeat(32)}-${SPAN}-01`,
    `00-${TRACE}-${'0'.repeat(16)}-01`,
    `00-${TRACE.toUpperCase()}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}`,
    `00-${TRACE}-${SPAN}-0g`,
    `00-${TRACE}"-${SPAN}-01`,
    [`00-${TRACE}-${SPAN}-01`, `00-${TRACE}-${SPAN}-01`],
  ]) {
    t.equal(parseTraceparent(bad), undefined, `refused: ${JSON.stringify(bad)}`);
  }
});

t.test('OTEL_TRACES_SAMPLER: parent-based ratio by default; the standard names; anything else stops the start', async (t) => {
  t.match(samplerFrom({}).toString(), /ParentBased\{root=TraceIdRatioBased\{1\}/);
  t.match(samplerFrom({ OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString(), /TraceIdRatioBased\{0\.25\}/);
  t.match(samplerFrom({ OTEL_TRACES_SAMPLER: 'always_off' }).toString(), /AlwaysOff/);
  t.match(samplerFrom({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' }).toString(), /ParentBased\{root=AlwaysOnSampler/);
  t.match(samplerFrom({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }).toString(), /^TraceIdRatioBased\{0\}/);
  t.throws(() => samplerFrom({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }), /not supported/);
  t.throws(() => samplerFrom({ OTEL_TRACES_SAMPLER_ARG: '1.5' }), /ratio from 0 to 1/);
  t.throws(() => samplerFrom({ OTEL_TRACES_SAMPLER_ARG: 'half' }), /ratio from 0 to 1/);
});
