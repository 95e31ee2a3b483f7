// The traceparent read without the SDK (tracing off), and the sampler read from OTEL_TRACES_SAMPLER.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { SamplingDecision, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace';
import { parseTraceparent, traceparentSampled } from '../../src/tracing/trace-context.js';
import { samplerFrom, samplingFrom } from '../../src/tracing/sampling.js';

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

t.test('the sampled flag of a traceparent: its lowest bit, and nothing of an invalid one', async (t) => {
  t.equal(traceparentSampled(`00-${TRACE}-${SPAN}-01`), true);
  t.equal(traceparentSampled(`00-${TRACE}-${SPAN}-03`), true, 'other flags beside it');
  t.equal(traceparentSampled(`00-${TRACE}-${SPAN}-00`), false);
  t.equal(traceparentSampled(`00-${TRACE}-${SPAN}-02`), false);
  t.equal(traceparentSampled(undefined), undefined, 'no parent: a root');
  t.equal(traceparentSampled(`00-${'0'.repeat(32)}-${SPAN}-00`), undefined, 'an invalid one is no parent');
});

/** The sampler's results for 200 server spans on random trace ids: roots, or under a remote parent sampled or not. */
function* decisionsOnRandomIds(sampler: Sampler, parentSampled: boolean | undefined): Generator<SamplingResult> {
  for (let i = 0; i < 200; i++) {
    const traceId = randomBytes(16).toString('hex');
    const context =
      parentSampled === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: randomBytes(8).toString('hex'), traceFlags: parentSampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true });
    yield sampler.shouldSample(context, traceId, 'GET', SpanKind.SERVER, {}, []);
  }
}

t.test('a request dropped upfront is one the sampler itself drops, whatever its trace id', async (t) => {
  const configs = [
    {},
    { OTEL_TRACES_SAMPLER_ARG: '0' },
    { OTEL_TRACES_SAMPLER_ARG: '0.5' },
    { OTEL_TRACES_SAMPLER: 'always_on' },
    { OTEL_TRACES_SAMPLER: 'always_off' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' },
    { OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
    { OTEL_TRACES_SAMPLER: 'parentbased_always_off' },
  ];
  let upfront = 0;
  for (const env of configs) {
    const { sampler, dropsUpfront } = samplingFrom(env);
    for (const parentSampled of [undefined, true, false]) {
      if (!dropsUpfront(parentSampled)) continue;
      upfront++;
      for (const { decision } of decisionsOnRandomIds(sampler, parentSampled)) {
        if (decision !== SamplingDecision.NOT_RECORD) {
          t.fail(`${JSON.stringify(env)}, parent sampled ${parentSampled}: dropped upfront, but the sampler says ${decision}`);
          return;
        }
      }
    }
  }
  t.equal(upfront, 13, 'the parent-based ones\' unsampled parents and their roots at 0 or always_off; every request of always_off and of traceidratio 0');
  t.notOk(samplingFrom({}).dropsUpfront(undefined), 'a root at ratio 1 is sampled');
  t.notOk(samplingFrom({ OTEL_TRACES_SAMPLER_ARG: '0.5' }).dropsUpfront(undefined), 'a root at a ratio between: the sampler decides on its trace id');
  t.notOk(samplingFrom({ OTEL_TRACES_SAMPLER_ARG: '0' }).dropsUpfront(true), 'a sampled parent is followed at 0 %');
});

t.test('a request sampled upfront is one the sampler itself samples, with no trace state of its own, whatever its trace id', async (t) => {
  const configs = [
    {},
    { OTEL_TRACES_SAMPLER_ARG: '0' },
    { OTEL_TRACES_SAMPLER_ARG: '0.5' },
    { OTEL_TRACES_SAMPLER_ARG: '1' },
    { OTEL_TRACES_SAMPLER: 'always_on' },
    { OTEL_TRACES_SAMPLER: 'always_off' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' },
    { OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
    { OTEL_TRACES_SAMPLER: 'parentbased_always_off' },
  ];
  let upfront = 0;
  for (const env of configs) {
    const { sampler, samplesUpfront, dropsUpfront } = samplingFrom(env);
    for (const parentSampled of [undefined, true, false]) {
      if (!samplesUpfront(parentSampled)) continue;
      upfront++;
      if (dropsUpfront(parentSampled)) t.fail(`${JSON.stringify(env)}, parent sampled ${parentSampled}: both sampled and dropped upfront`);
      for (const { decision, traceState } of decisionsOnRandomIds(sampler, parentSampled)) {
        if (decision !== SamplingDecision.RECORD_AND_SAMPLED || traceState !== undefined) {
          t.fail(`${JSON.stringify(env)}, parent sampled ${parentSampled}: sampled upfront, but the sampler says ${decision}`);
          return;
        }
      }
    }
  }
  // Roots: the parent-based ratio of 1 (unset and '1'), parentbased_always_on, always_on and
  // traceidratio 1 (5); sampled parents: the six parent-based ones, always_on and traceidratio 1
  // (8); unsampled parents: always_on and traceidratio 1, which ignore the parent (2).
  t.equal(upfront, 15, 'every request the settings alone say is sampled');
  t.notOk(samplingFrom({ OTEL_TRACES_SAMPLER_ARG: '0.5' }).samplesUpfront(undefined), 'a root at a ratio between: the sampler decides on its trace id');
  t.notOk(samplingFrom({}).samplesUpfront(false), 'an unsampled parent under a parent-based sampler is not sampled');
});
