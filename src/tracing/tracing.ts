/**
 * The gateway's part in a distributed trace (issue 33), as the request paths see it. The
 * OpenTelemetry SDK is loaded only when AUTHGATE_TRACING=on (loadTracing: a dynamic import, like
 * ioredis), so with tracing off nothing of it is in the process and each request path pays one
 * check of `tracing === undefined`. The SDK side is tracing/sdk.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { incomingTraceIds, type TraceIds } from './trace-context.js';

export type { TraceIds } from './trace-context.js';

/** A node:http request handler: the public port's, or any other listener's (issue 30's authz port). */
export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** What the server span says of a request once it is answered: never a credential, a key id, an e-mail or a query. */
export type TracedAnswer = Readonly<{
  /** The route's label (its template), never the raw path. */
  route: string;
  status: number;
  /** `api_key`, `jwt`, … as the auth decision metric has it. */
  credentialKind: string | undefined;
  /** The auth decision's reason (`ok`, `revoked_token`, …). */
  reason: string | undefined;
  /** Recorded only with AUTHGATE_TRACING_ORG_ID=on. */
  orgId: string | undefined;
}>;

export type Tracing = Readonly<{
  /**
   * A server span for every request the handler is given, its parent the request's
   * `traceparent` (when any); the span is current while the handler runs, so `child` finds it.
   * The hook for another listener (the authorization endpoints of issue 30): wrap its handler,
   * call `finish` once it has answered.
   */
  serve(handler: RequestHandler, scheme: 'http' | 'https'): RequestHandler;
  /** Ends the request's server span (and its upstream client span) with what the answer was. */
  finish(request: IncomingMessage, answer: TracedAnswer): void;
  /** The request's own span's ids (the gateway's span), when it has one. */
  ids(request: IncomingMessage): TraceIds | undefined;
  /**
   * Starts the upstream call's client span under the request's span and writes its context into
   * the outgoing headers (`traceparent`, `tracestate`), so the upstream's spans hang under it.
   */
  upstream(request: IncomingMessage, headers: Record<string, unknown>, upstreamHost: string): void;
  /**
   * Runs `next` with the request's span current again: fastify calls a route's later hooks and
   * handler from the body's stream events, outside the context the request began in.
   */
  resume(request: IncomingMessage, next: () => void): void;
  /** A child span of the current request's span around `work` (store read, argon2, lease, signing); none outside a request. */
  child<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** Exports what is queued (bounded), then stops. */
  shutdown(): Promise<void>;
}>;

export type TracingOptions = Readonly<{
  /** AUTHGATE_TRACING_ORG_ID=on: the organization id as a span attribute. */
  recordOrgId: boolean;
  /** Service version for the resource (`service.version`). */
  serviceVersion: string;
  /** Spans dropped: the queue full, or an export failed (the collector down or refusing). */
  onDropped: (reason: 'queue_full' | 'export_failed', spans: number) => void;
}>;

/** The SDK, imported only now: nothing of it is loaded while tracing is off. */
export async function loadTracing(options: TracingOptions): Promise<Tracing> {
  const { createTracing } = await import('./sdk.js');
  return createTracing(options);
}

/**
 * The ids a request's log lines carry: the gateway's own span with tracing on, else the client's
 * `traceparent` as it came (forwarded unchanged to the upstream).
 */
export function traceIdsOf(tracing: Tracing | undefined, request: IncomingMessage): TraceIds | undefined {
  return (tracing !== undefined ? tracing.ids(request) : undefined) ?? incomingTraceIds(request);
}

/**
 * `target` with the named async methods each run inside a child span (tracing on only):
 * the store reads of a cache miss, argon2, the rate-limit lease, the identity signing. Every
 * method still runs on `target` itself (bound to it, not copied), so `this` and private fields
 * are unchanged.
 *
 * Not a Proxy: a proxy's trap runs on every property read, and the identity signer's `current`
 * is read on every forwarded request (~0.5 µs each under the bench's load, issue 33's sixth
 * step). An object made once instead: the target's methods (its own and its classes') as own
 * properties, bound, the named ones wrapped; its other properties read and written through to
 * the target; the target its prototype, so anything added to it later still reads through.
 */
export function traced<T extends object>(target: T, tracing: Tracing | undefined, spans: Partial<Record<keyof T & string, string>>): T {
  if (tracing === undefined) return target;
  const names = new Map<PropertyKey, string>(Object.entries(spans) as [string, string][]);
  const wrapper = Object.create(target) as object;
  const seen = new Set<PropertyKey>(['constructor']);
  for (let level: object | null = target; level !== null && level !== Object.prototype; level = Object.getPrototypeOf(level) as object | null) {
    for (const key of Reflect.ownKeys(level)) {
      if (seen.has(key)) continue;
      seen.add(key);
      const found = Object.getOwnPropertyDescriptor(level, key)!;
      if (typeof found.value === 'function') {
        const bound = (found.value as (...args: unknown[]) => unknown).bind(target);
        const name = names.get(key);
        const method = name === undefined ? bound : (...args: unknown[]) => tracing.child(name, () => Promise.resolve(bound(...args)));
        Object.defineProperty(wrapper, key, { value: method, writable: true, configurable: true });
      } else {
        // A field or an accessor: read and written on the target, as the target would have it.
        Object.defineProperty(wrapper, key, {
          get: () => Reflect.get(target, key, target) as unknown,
          set: (value: unknown) => void Reflect.set(target, key, value, target),
          configurable: true,
        });
      }
    }
  }
  return wrapper as T;
}
