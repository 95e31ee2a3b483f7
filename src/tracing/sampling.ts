/**
 * Which requests are traced: the sampler named by OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG
 * (the official SDK's samplers), and beside it what that sampler would answer for a request known
 * from its `traceparent`'s sampled flag alone, so tracing/sdk.ts can skip the sampler (and every
 * OpenTelemetry object) where the settings already say "dropped" or "sampled" (issue 33's second
 * and fourth steps, docs/performance.md). test/tracing/trace-context.test.ts checks both answers
 * against the SDK's own samplers on random trace ids.
 */
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace';

/**
 * OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (the OpenTelemetry names). Unset: parent-based
 * ratio, so a client's decision is respected and a root is sampled at the ratio (default 1).
 */
export function samplerFrom(env: NodeJS.ProcessEnv): Sampler {
  return samplingFrom(env).sampler;
}

/**
 * A request the sampler would certainly drop, known from its `traceparent`'s sampled flag alone
 * (undefined: no valid parent, a root): no span, no context, nothing injected (tracing/sdk.ts serve).
 * False where the sampler must look at a trace id (a ratio between 0 and 1) or would sample.
 */
export type DropsUpfront = (parentSampled: boolean | undefined) => boolean;

/**
 * A request the sampler would certainly sample, known from its parent's sampled flag alone
 * (undefined: a root): it would answer RECORD_AND_SAMPLED with no trace state of its own, so the
 * span keeps its parent's. True where the sampler samples whatever the trace id (always_on, a
 * ratio of 1, a sampled parent under a parent-based sampler); the sampler is asked for the rest.
 */
export type SamplesUpfront = (parentSampled: boolean | undefined) => boolean;

export function samplingFrom(env: NodeJS.ProcessEnv): { sampler: Sampler; dropsUpfront: DropsUpfront; samplesUpfront: SamplesUpfront } {
  const name = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_traceidratio';
  const arg = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim();
  const ratio = () => {
    if (arg === '') return 1;
    const value = Number(arg);
    if (!Number.isFinite(value) || value < 0 || value > 1) throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, not ${JSON.stringify(arg)}`);
    return value;
  };
  const always = () => true;
  const notUpfront = () => false;
  // ParentBasedSampler's defaults: a sampled parent (remote or local) is sampled, an unsampled one dropped.
  const parentBased = (rootDrops: boolean): DropsUpfront => (parentSampled) => (parentSampled === undefined ? rootDrops : !parentSampled);
  const parentBasedSamples = (rootSamples: boolean): SamplesUpfront => (parentSampled) => (parentSampled === undefined ? rootSamples : parentSampled);
  switch (name) {
    case 'always_on':
      return { sampler: new AlwaysOnSampler(), dropsUpfront: notUpfront, samplesUpfront: always };
    case 'always_off':
      return { sampler: new AlwaysOffSampler(), dropsUpfront: always, samplesUpfront: notUpfront };
    case 'traceidratio': {
      // A ratio of 1 samples every valid trace id (the sampler's bound is past every sum of one),
      // and a request's trace id is valid: its parent's (a valid context) or the gateway's own.
      const value = ratio();
      return { sampler: new TraceIdRatioBasedSampler(value), dropsUpfront: value === 0 ? always : notUpfront, samplesUpfront: value === 1 ? always : notUpfront };
    }
    case 'parentbased_always_on':
      return { sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }), dropsUpfront: parentBased(false), samplesUpfront: parentBasedSamples(true) };
    case 'parentbased_always_off':
      return { sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }), dropsUpfront: parentBased(true), samplesUpfront: parentBasedSamples(false) };
    case 'parentbased_traceidratio': {
      const value = ratio();
      return { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(value) }), dropsUpfront: parentBased(value === 0), samplesUpfront: parentBasedSamples(value === 1) };
    }
    default:
      throw new Error(`OTEL_TRACES_SAMPLER ${JSON.stringify(name)} is not supported: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio`);
  }
}
