import { LogController, type FastifyBaseLogger } from 'fastify';
import type { Logger } from '../observability/logging.js';
import { requestIdOf } from './request-id.js';
import { describeValidation } from './validation-message.js';

/**
 * The fastify options both ports share (public and ops): one log line per request written by
 * the gateway itself, its own request ids, strict schemas and JSON, bounded request time, and
 * its own answer while closing. Each server adds what is its own (TLS, proxy trust, body limit,
 * router, refusal handlers).
 */
export function sharedServerOptions(logger: Logger) {
  return {
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
