/**
 * The OpenTelemetry side of tracing/tracing.ts, imported only when AUTHGATE_TRACING=on. Official
 * packages for everything but the span objects: the API, the trace SDK's samplers and batch
 * processor, the W3C Trace Context propagator of core (extracting a client's traceparent and
 * tracestate), resources and the OTLP/HTTP protobuf exporter's delegate and transport, which read
 * OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_EXPORTER_OTLP_TIMEOUT itself. The spans are the gateway's own light ReadableSpans
 * (tracing/light-span.ts, hand-written for speed: half the cost of the SDK tracer's, measured
 * there), handed to that processor and exporter; the exporter's body for a batch of them is
 * written by tracing/span-encoder.ts (hand-written for speed, byte for byte the official
 * serializer's, which writes any other batch).
 *
 * What a request costs is decided first (serve): one the sampler would drop, known from its
 * traceparent's flag alone, gets nothing at all (no span, no context, its traceparent forwarded
 * unchanged), as with tracing off.
 *
 * No global provider, propagator or context manager is registered: the request's spans are
 * handed explicitly (a WeakMap by request), and an AsyncLocalStorage of this module's own carries
 * them to the child spans (the store read, argon2, …) without the rest of the gateway knowing of
 * it. A child outside a request is no span at all, never a stray root.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import {
  createNoopMeter,
  defaultTextMapGetter,
  isSpanContextValid,
  ROOT_CONTEXT,
  SamplingDecision,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Link,
  type Meter,
  type MeterProvider,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, TraceExporterMetricsHelper, type IExportTraceServiceResponse, type ISerializer } from '@opentelemetry/otlp-transformer';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import { LightSpan, randomId, type SpanSink } from './light-span.js';
import { encodeLightSpans } from './span-encoder.js';
import { traceparentSampled } from './trace-context.js';
import type { RequestHandler, TracedAnswer, Tracing, TracingOptions } from './tracing.js';

/** Attribute names of the gateway's own (no semantic convention says these). */
export const ATTR_DECISION_REASON = 'authgate.decision.reason';
export const ATTR_CREDENTIAL_KIND = 'authgate.credential.kind';
export const ATTR_ORGANIZATION_ID = 'authgate.organization.id';

/** The SDK's own metric of finished spans; `error.type` on it says which were dropped and why. */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';

/** A request's server span has no links (handed to the sampler; none of the supported ones writes to it). */
const NO_LINKS: Link[] = [];

/** How long close() waits for the last export: a dead collector never holds a shutdown longer. */
const SHUTDOWN_BOUND_MS = 5_000;

/**
 * A sampled request's spans, and its server span's context made once: the parent of its client
 * span and of its children (one context per request, not one per span started under it).
 */
type RequestSpans = { server: LightSpan; client: LightSpan | undefined };

export function createTracing(options: TracingOptions, env: NodeJS.ProcessEnv = process.env): Tracing {
  const processor = new BatchSpanProcessor({
    exporter: otlpExporter(),
    // Bounded: past maxQueueSize spans are dropped (and counted), a request never waits.
    maxQueueSize: positive(env.OTEL_BSP_MAX_QUEUE_SIZE, 'OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048,
    maxExportBatchSize: positive(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512,
    scheduledDelayMillis: positive(env.OTEL_BSP_SCHEDULE_DELAY, 'OTEL_BSP_SCHEDULE_DELAY') ?? 5000,
    exportTimeoutMillis: positive(env.OTEL_BSP_EXPORT_TIMEOUT, 'OTEL_BSP_EXPORT_TIMEOUT') ?? 30_000,
    selfObsMeterProvider: droppedSpanMeter(options.onDropped),
  });
  const { sampler, dropsUpfront, samplesUpfront } = samplingFrom(env);
  const sink: SpanSink = {
    processor,
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) over the gateway's own defaults.
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'authgate', [ATTR_SERVICE_VERSION]: options.serviceVersion }).merge(detectResources({ detectors: [envDetector] })),
    scope: { name: 'authgate', version: options.serviceVersion },
  };
  const propagator = new W3CTraceContextPropagator();
  const current = new AsyncLocalStorage<RequestSpans>();
  const requests = new WeakMap<IncomingMessage, RequestSpans>();
  const recordOrgId = options.recordOrgId;
  // The upstreams' addresses (from the route table, a bounded set), each read once.
  const upstreamAddresses = new Map<string, string>();
  // Every request to one gateway names the same Host, mostly: its address read once, not per span.
  let lastHost: string | undefined;
  let lastAddress: string | undefined;
  const serverAddress = (host: string | undefined): string | undefined => {
    if (host !== lastHost) {
      lastHost = host;
      lastAddress = hostOf(host);
    }
    return lastAddress;
  };
  /**
   * A span under the request's server span: its client span and its children. Sampled, as the
   * sampler would have it under every supported one: a parent-based sampler samples what a
   * sampled local parent starts, and a ratio decides on the trace id, which is the parent's.
   */
  const under = (server: LightSpan, name: string, kind: SpanKind, attributes: Attributes): LightSpan => {
    const context = server.spanContext();
    return new LightSpan(sink, name, kind, attributes, context.traceId, context, context.traceState);
  };

  return {
    serve(handler: RequestHandler, scheme: 'http' | 'https'): RequestHandler {
      return (request, response) => {
        const traceparent = request.headers.traceparent;
        // A request the sampler would drop is served as with tracing off, decided before any
        // OpenTelemetry object exists: no span, no context entered, its traceparent (if any)
        // forwarded unchanged, its log lines carrying the client's ids (tracing.ts traceIdsOf).
        // Measured (docs/performance.md, issue 33): the unsampled span, its context and the
        // injected traceparent cost ~40 µs of CPU per request.
        if (dropsUpfront(traceparentSampled(traceparent))) return handler(request, response);
        // Without a traceparent (a root) there is nothing to extract: the root context as it is.
        const parentContext = traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
        let parent = traceparent === undefined ? undefined : trace.getSpanContext(parentContext);
        if (parent !== undefined && !isSpanContextValid(parent)) parent = undefined;
        const traceId = parent?.traceId ?? randomId(16);
        const method = request.method ?? '_OTHER';
        const attributes: Attributes = { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_SCHEME]: scheme };
        const host = serverAddress(request.headers.host);
        if (host !== undefined) attributes[ATTR_SERVER_ADDRESS] = host;
        // The official sampler decides, as the SDK's tracer would ask it. Dropped (a root whose
        // trace id fell outside a ratio): the same as dropped upfront. (A sampler that records
        // without sampling, none of the supported ones, would export nothing: dropped too.)
        // A request the sampler would certainly sample (samplesUpfront: 100 %, or a sampled parent
        // under a parent-based sampler) is not asked: the official ratio sampler checks the trace id
        // with a regular expression and sums it, 1–2 µs of CPU per request (measured,
        // docs/performance.md, issue 33's fourth step), to say what its settings already say.
        let traceState = parent?.traceState;
        if (!samplesUpfront(parent === undefined ? undefined : (parent.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED)) {
          const sampling = sampler.shouldSample(parentContext, traceId, method, SpanKind.SERVER, attributes, NO_LINKS);
          if (sampling.decision !== SamplingDecision.RECORD_AND_SAMPLED) return handler(request, response);
          traceState = sampling.traceState ?? traceState;
        }
        // Named by method only until the route is known (finish): never by the raw path.
        const server = new LightSpan(sink, method, SpanKind.SERVER, attributes, traceId, parent, traceState);
        const spans: RequestSpans = { server, client: undefined };
        requests.set(request, spans);
        current.run(spans, handler, request, response);
      };
    },

    finish(request, answer: TracedAnswer) {
      const spans = requests.get(request);
      if (spans === undefined) return;
      requests.delete(request);
      const { server, client } = spans;
      const status = answer.status;
      if (client !== undefined) {
        client.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        if (status >= 500) client.setAttribute(ATTR_ERROR_TYPE, String(status)).setStatus({ code: SpanStatusCode.ERROR });
        client.end();
      }
      if (!server.isRecording()) return server.end();
      const method = request.method ?? '_OTHER';
      if (answer.route !== 'unmatched') server.updateName(spanName(method, answer.route)).setAttribute(ATTR_HTTP_ROUTE, answer.route);
      server.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (answer.credentialKind !== undefined) server.setAttribute(ATTR_CREDENTIAL_KIND, answer.credentialKind);
      if (answer.reason !== undefined) server.setAttribute(ATTR_DECISION_REASON, answer.reason);
      if (recordOrgId && answer.orgId !== undefined) server.setAttribute(ATTR_ORGANIZATION_ID, answer.orgId);
      // A server's 4xx is the client's error and leaves the status unset (HTTP semantic
      // conventions); the code and the decision's reason say why it was refused. A 5xx is an error.
      if (status >= 500) server.setAttribute(ATTR_ERROR_TYPE, String(status)).setStatus({ code: SpanStatusCode.ERROR });
      server.end();
    },

    ids(request) {
      const spans = requests.get(request);
      if (spans === undefined) return undefined;
      // Valid by construction: only a recording span (the SDK's own ids) is kept. Its context is
      // the ids (and more, never read by a log line): no copy made per request.
      return spans.server.spanContext();
    },

    upstream(request, headers, upstreamHost) {
      const spans = requests.get(request);
      if (spans === undefined || spans.client !== undefined) return;
      const method = request.method ?? '_OTHER';
      let address = upstreamAddresses.get(upstreamHost);
      if (address === undefined) upstreamAddresses.set(upstreamHost, (address = hostOf(upstreamHost) ?? upstreamHost));
      const client = under(spans.server, method, SpanKind.CLIENT, { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_SERVER_ADDRESS]: address });
      spans.client = client;
      // Replaces the client's traceparent (and carries its tracestate on): the upstream's parent is
      // this span. Written as W3CTraceContextPropagator.inject writes it (version 00, the span's
      // ids and flags, the trace state serialized), without the context it would need made for
      // the span first: the SDK's ids are valid lower-case hex by construction.
      const context = client.spanContext();
      headers['traceparent'] = `00-${context.traceId}-${context.spanId}-${(context.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? '01' : '00'}`;
      if (context.traceState !== undefined) headers['tracestate'] = context.traceState.serialize();
    },

    resume(request, next) {
      const spans = requests.get(request);
      if (spans === undefined) return next();
      current.run(spans, next);
    },

    child<T>(name: string, work: () => Promise<T>): Promise<T> {
      const parent = current.getStore();
      if (parent === undefined || !parent.server.isRecording()) return work();
      const span = under(parent.server, name, SpanKind.INTERNAL, {});
      return work().then(
        (value) => {
          span.end();
          return value;
        },
        (error: unknown) => {
          // The error's class only: its message may hold what a span must not (an address, a key).
          span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : 'error').setStatus({ code: SpanStatusCode.ERROR });
          span.end();
          throw error;
        },
      );
    },

    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_BOUND_MS);
        timer.unref();
      });
      await Promise.race([processor.shutdown().catch(() => undefined), bound]);
      clearTimeout(timer);
    },
  };
}

/**
 * The official OTLP/HTTP protobuf exporter, made as @opentelemetry/exporter-trace-otlp-proto's
 * OTLPTraceExporter makes itself (0.301.1: the same settings read from the environment, the same
 * transport, retries and content type), but for the body of a batch of light spans: written by
 * span-encoder.ts, byte for byte the official serializer's in a quarter of its time (measured:
 * 4–5 µs of CPU per request at 100 % sampling, most of tracing's own work, against 1.1–1.3).
 */
function otlpExporter(): SpanExporter {
  const serializer: ISerializer<ReadableSpan[], IExportTraceServiceResponse> = {
    serializeRequest: (spans) => encodeLightSpans(spans) ?? ProtobufTraceSerializer.serializeRequest(spans),
    deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
  };
  const options = convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' });
  return new OTLPExporterBase(createOtlpHttpExportDelegate(options, serializer, 'otlp_http_span_exporter', TraceExporterMetricsHelper, undefined));
}

/**
 * OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (the OpenTelemetry names). Unset: parent-based
 * ratio, so a client's decision is respected and a root is sampled at the ratio (default 1).
 */
export function samplerFrom(env: NodeJS.ProcessEnv): Sampler {
  return samplingFrom(env).sampler;
}

/**
 * A request the sampler would certainly drop, known from its `traceparent`'s sampled flag alone
 * (undefined: no valid parent, a root): no span, no context, nothing injected (serve below).
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

function positive(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new Error(`${name} must be a whole number above 0, not ${JSON.stringify(value)}`);
  return number;
}

/**
 * The batch processor reports every span it finishes on the SDK's own self-observability
 * counter, those dropped with `error.type` (`queue_full`, or the failed export's error). This
 * meter provider keeps only that counter, and only its drops, for authgate's own metric.
 */
function droppedSpanMeter(onDropped: TracingOptions['onDropped']): MeterProvider {
  const noop = createNoopMeter();
  const meter = Object.create(noop) as Meter;
  meter.createCounter = ((name: string, options?: Parameters<Meter['createCounter']>[1]) => {
    if (name !== PROCESSED_SPANS) return noop.createCounter(name, options);
    return {
      add(value: number, attributes?: Attributes) {
        const error = attributes?.[ATTR_ERROR_TYPE];
        if (error !== undefined) onDropped(error === 'queue_full' ? 'queue_full' : 'export_failed', value);
      },
    };
  }) as Meter['createCounter'];
  return { getMeter: () => meter };
}

/**
 * A server span's name, `METHOD route`, made once per route and method for the methods of HTTP
 * (the routes are the route table's labels, a bounded set; any other method a client may send is
 * named anew each time, never kept).
 */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const spanNames = new Map<string, Map<string, string>>();
function spanName(method: string, route: string): string {
  if (!KNOWN_METHODS.has(method)) return `${method} ${route}`;
  let byMethod = spanNames.get(route);
  if (byMethod === undefined) spanNames.set(route, (byMethod = new Map()));
  let name = byMethod.get(method);
  if (name === undefined) byMethod.set(method, (name = `${method} ${route}`));
  return name;
}

/** The Host header's host, without the port; bounded, as a client wrote it. */
function hostOf(host: string | undefined): string | undefined {
  if (host === undefined || host === '' || host.length > 255) return undefined;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end === -1 ? undefined : host.slice(1, end);
  }
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}
