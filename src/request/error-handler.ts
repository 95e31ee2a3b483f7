import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Problem, problems, type ProblemName } from '../problems.js';
import { StoreUnavailable } from '../store/store.js';
import { WriteNotReplicated } from '../store/durability.js';

/**
 * The one place that turns anything thrown into application/problem+json (RFC 9457), with
 * `WWW-Authenticate` on 401 and on 403 insufficient_scope (RFC 6750) and `Retry-After` on 503.
 * Unknown errors become a 500 that echoes nothing and is logged once.
 */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
const PROBLEM_TYPE_BASE = 'urn:authgate:problem:';

export type ProblemBody = { type: string; title: string; status: number; detail?: string; code: number };

/** `credentialInvalid` → `urn:authgate:problem:credential-invalid`, made once per problem, not per answer. */
const PROBLEM_TYPES = Object.fromEntries(
  Object.keys(problems).map((name) => [name, PROBLEM_TYPE_BASE + name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)]),
) as Record<ProblemName, string>;

export function problemBody(name: ProblemName, detail?: string): ProblemBody {
  const spec = problems[name];
  return {
    type: PROBLEM_TYPES[name],
    title: spec.title,
    status: spec.status,
    ...(detail !== undefined && { detail }),
    code: spec.code,
  };
}

/** Fastify's own client errors, by code, and what they mean to a client of the gateway. */
const FASTIFY_CLIENT_ERRORS: Record<string, ProblemName> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupportedMediaType',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'badRequest',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payloadTooLarge',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformedJson',
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformedJson',
  FST_ERR_CTP_EMPTY_TYPE: 'unsupportedMediaType',
  FST_ERR_CTP_INVALID_TYPE: 'unsupportedMediaType',
  FST_ERR_BAD_URL: 'badRequest',
  FST_ERR_MAX_PARAM_LENGTH: 'badRequest',
  FST_ERR_ASYNC_CONSTRAINT: 'badRequest',
};

export function toProblem(error: FastifyError | Error): Problem {
  if (error instanceof Problem) return error;
  if (error instanceof WriteNotReplicated) {
    return new Problem('writeNotReplicated', 'The change was not confirmed by enough credential store replicas and may or may not have been kept; check before retrying.', 'write_not_replicated');
  }
  if (error instanceof StoreUnavailable) return new Problem('storeUnavailable', 'The credential store did not answer; try again shortly.', 'store_unavailable');
  const fastifyError = error as FastifyError;
  if (fastifyError.validation !== undefined) return new Problem('badRequest', fastifyError.message);
  const mapped = fastifyError.code === undefined ? undefined : FASTIFY_CLIENT_ERRORS[fastifyError.code];
  if (mapped !== undefined) return new Problem(mapped);
  const status = fastifyError.statusCode ?? 500;
  if (status === 400) {
    // JSON.parse's SyntaxError and secure-json-parse's prototype-poisoning refusal.
    return error instanceof SyntaxError ? new Problem('malformedJson') : new Problem('badRequest', 'The request body is not acceptable.');
  }
  if (status === 413) return new Problem('payloadTooLarge');
  if (status === 415) return new Problem('unsupportedMediaType');
  if (status === 404) return new Problem('notFound');
  if (status === 405) return new Problem('methodNotAllowed');
  if (status === 431) return new Problem('headersTooLarge');
  return new Problem('internalError');
}

export function sendProblem(reply: FastifyReply, problem: Problem, realm = 'authgate'): FastifyReply {
  reply.code(problems[problem.problem].status).headers(problemHeaders(problem, realm));
  return reply.send(problemBody(problem.problem, problem.detail));
}

/**
 * The headers of a refusal beside its body: sendProblem's, and those of the answers made outside
 * fastify (the edge proxies' authorization port, edge-authz/), so both say the same.
 */
export function problemHeaders(problem: Problem, realm = 'authgate'): Record<string, string> {
  const status = problems[problem.problem].status;
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': 'no-store' };
  if (status === 401) headers['www-authenticate'] = wwwAuthenticate(realm, problem);
  // RFC 6750 §3.1: the scope the request lacked. Scope names are the gateway's own (authz/scopes.ts).
  else if (problem.requiredScope !== undefined) headers['www-authenticate'] = `Bearer realm="${realm}", error="insufficient_scope", scope="${problem.requiredScope}"`;
  if (status === 503 || status === 429) headers['retry-after'] = String(problem.retryAfterSeconds ?? 1);
  return headers;
}

/** RFC 6750 §3: no error code when no bearer token was sent, else what was wrong with it. */
function wwwAuthenticate(realm: string, problem: Problem): string {
  const reason = problem.reason;
  if (problem.problem !== 'credentialInvalid' && problem.problem !== 'wrongEnvironment') return `Bearer realm="${realm}"`;
  if (reason === 'not_bearer') return `Bearer realm="${realm}"`;
  if (reason === 'malformed' || reason === 'duplicate') return `Bearer realm="${realm}", error="invalid_request"`;
  return `Bearer realm="${realm}", error="invalid_token"`;
}

export function createErrorHandler(realm: string) {
  return function renderProblem(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const problem = toProblem(error);
    if (problem.problem === 'internalError') request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, problem, realm);
  };
}
