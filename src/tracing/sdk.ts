/**
 * The OpenTelemetry side of tracing/tracing.ts, imported only when AUTHGATE_TRACING=on: the
 * request's spans. This module makes them (a server span per sampled request, its upstream client
 * span, the children of the store read, argon2, …) and ends them with what the answer was; which
 * requests are sampled is tracing/sampling.ts's, where ended spans go (the official batch
 * processor, the OTLP/HTTP exporter, span-encoder.ts's body) tracing/span-export.ts's. Official
 * packages for everything but the span objects: the API, the W3C Trace Context propagator of core
 * (extracting a client's traceparent and tracestate) and resources (OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES). The spans are the gateway's own light ReadableSpans
 * (tracing/light-span.ts, hand-written for speed: half the cost of the SDK tracer's, measured
 * there).
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
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
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
import { samplingFrom } from './sampling.js';
import { batchProcessor } from './span-export.js';
import { traceparentSampled } from './trace-context.js';
import type { RequestHandler, TracedAnswer, Tracing, TracingOptions } from './tracing.js';

/** Attribute names of the gateway's own (no semantic convention says these). */
export const ATTR_DECISION_REASON = 'authgate.decision.reason';
export const ATTR_CREDENTIAL_KIND = 'authgate.credential.kind';
export const ATTR_ORGANIZATION_ID = 'authgate.organization.id';

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
  const processor = batchProcessor(env, options.onDropped);
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
