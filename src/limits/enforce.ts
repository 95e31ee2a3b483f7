// The rate-limit stage of forwarded routes: the credential's limit (policy.ts), one request counted
// (limiter.ts), the RateLimit headers on the answer, and a 429 before anything reaches the upstream.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Problem } from '../problems.js';
import type { RateLimiter, RateVerdict } from './limiter.js';
import { POLICY_NAME, type RateLimitPolicy } from './policy.js';

/** Both headers every answer of a limited credential carries, also the upstream's (which loses its own). */
export const RATE_LIMIT_HEADERS = ['ratelimit-policy', 'ratelimit'] as const;

/**
 * undefined when the request may go on (at once, while this replica holds budget), a promise of
 * the same otherwise; throws or rejects with a 429 problem when the limit is reached.
 */
export type RateLimitCheck = (request: FastifyRequest, reply: FastifyReply) => undefined | Promise<undefined>;

/** The RateLimit field of an answer: what the window has left and when it ends. */
export function rateLimitHeader(verdict: RateVerdict): string {
  return `"${POLICY_NAME}";r=${verdict.remaining};t=${verdict.resetSeconds}`;
}

export function createRateLimitCheck(policy: RateLimitPolicy, limiter: RateLimiter, onRefused: () => void): RateLimitCheck {
  const settle = (reply: FastifyReply, verdict: RateVerdict): undefined => {
    reply.request.rateLimited = true;
    reply.header('ratelimit-policy', verdict.limit.policyHeader);
    reply.header('ratelimit', rateLimitHeader(verdict));
    if (verdict.allowed) return undefined;
    onRefused();
    const { count, windowSeconds } = verdict.limit;
    throw new Problem(
      'rateLimited',
      `This credential may make ${count} requests per ${windowSeconds} s; try again in ${verdict.resetSeconds} s.`,
      'rate_limited',
      verdict.resetSeconds,
    );
  };
  return (request, reply) => {
    const principal = request.principal!; // route-policy guarantees one on every forwarded route
    const limit = policy.limitFor(principal);
    if (limit === undefined) return undefined;
    const verdict = limiter.take(principal, limit);
    return verdict instanceof Promise ? verdict.then((v) => settle(reply, v)) : settle(reply, verdict);
  };
}
