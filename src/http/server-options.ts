import type { IncomingMessage } from 'node:http';
import { LogController, type FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
import { traceIdsOf, type Tracing } from '../tracing/tracing.js';
import type { Logger } from '../observability/logging.js';
import { requestIdOf } from '../request/request-id.js';
import { describeValidation } from './validation-message.js';

/**
 * The fastify options both ports share (public and ops): one log line per request written by
 * the gateway itself, its own request ids, strict schemas and JSON, bounded request time, and
 * its own answer while closing. Each server adds what is its own (TLS, proxy trust, body limit,
 * router, refusal handlers).
 */
export function sharedServerOptions(logger: Logger, tracing?: Tracing) {
  return {
    // Every log line of a request carries its trace (tracing on: the gateway's span; off: the
    // client's traceparent), as its access line does: its logs are found from its trace.
    childLoggerFactory(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions, raw: IncomingMessage): FastifyBaseLogger {
      const trace = traceIdsOf(tracing, raw);
      if (trace !== undefined) {
        bindings['trace_id'] = trace.traceId;
        bindings['span_id'] = trace.spanId;
      }
      return parent.child(bindings, options);
    },
    loggerInstance: logger as FastifyBaseLogger,
    // One line per request, written in onResponse (observability/access-log.ts), not fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    onProtoPoisoning: 'error',
    // Refuse what does not fit a schema, rather than quietly trimming or converting it.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    // A value that fails its schema is described in words (a pattern never shows as a regex).
    schemaErrorFormatter: describeValidation,
    onConstructorPoisoning: 'error',
    // A client must send its whole request in bounded time (headers: HEADERS_TIMEOUT_MS).
    requestTimeout: 30_000,
    // Fastify's 503 while closing is its own JSON: the first onRequest hook answers with a problem instead.
    return503OnClosing: false,
  } as const;
}

/** Slow-loris: the headers must arrive within this, set on each server's node server. */
export const HEADERS_TIMEOUT_MS = 10_000;
