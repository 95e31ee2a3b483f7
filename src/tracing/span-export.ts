/**
 * Where finished spans go: the official BatchSpanProcessor (its OTEL_BSP_* settings read here),
 * exporting through the official OTLP/HTTP delegate and transport with span-encoder.ts writing a
 * batch of light spans, and the processor's count of dropped spans turned into authgate's metric.
 * Nothing here runs per request: a span reaches it only through the processor's onEnd.
 */
import { createNoopMeter, type Attributes, type Meter, type MeterProvider } from '@opentelemetry/api';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, TraceExporterMetricsHelper, type IExportTraceServiceResponse, type ISerializer } from '@opentelemetry/otlp-transformer';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { encodeLightSpans } from './span-encoder.js';
import type { TracingOptions } from './tracing.js';

/** The SDK's own metric of finished spans; `error.type` on it says which were dropped and why. */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';

/** The batch processor every sampled span is handed to when it ends, exporting to the OTLP endpoint. */
export function batchProcessor(env: NodeJS.ProcessEnv, onDropped: TracingOptions['onDropped']): BatchSpanProcessor {
  return new BatchSpanProcessor({
    exporter: otlpExporter(),
    // Bounded: past maxQueueSize spans are dropped (and counted), a request never waits.
    maxQueueSize: positive(env.OTEL_BSP_MAX_QUEUE_SIZE, 'OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048,
    maxExportBatchSize: positive(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512,
    scheduledDelayMillis: positive(env.OTEL_BSP_SCHEDULE_DELAY, 'OTEL_BSP_SCHEDULE_DELAY') ?? 5000,
    exportTimeoutMillis: positive(env.OTEL_BSP_EXPORT_TIMEOUT, 'OTEL_BSP_EXPORT_TIMEOUT') ?? 30_000,
    selfObsMeterProvider: droppedSpanMeter(onDropped),
  });
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
