/**
 * A route's own rate limit (the routes file's `rateLimit`, issue 28): per credential and route id,
 * on top of the credential's own limit; per client address on a public route. Counted like the
 * credential's (limiter.ts: budget leased from the store, so it holds across replicas), under a key
 * of its own (`route:<id>:<credential id>`, `route:<id>:addr:<address>`): a route whose id a reload
 * keeps keeps its windows, and a credential's own window is never touched.
 */
import type { FastifyRequest } from 'fastify';
import { Problem } from '../problems.js';
import type { CompiledRoute } from '../route-table/types.js';
import type { RateLimiter, RateVerdict } from './limiter.js';
import { limitApplier } from './policy.js';

/** undefined when the request may go on at once, a promise of the same otherwise; throws or rejects with a 429. */
export type RouteLimitCheck = (request: FastifyRequest, route: CompiledRoute) => undefined | Promise<undefined>;

/** Whom a route's window counts: the limiter's key and the shard the store keeps it on. */
export type RouteLimitKey = Readonly<{ credentialId: string; orgId: string }>;

/** The organization a public route's windows are kept under (they belong to none). */
const PUBLIC_SHARD = 'public';

/** A route's limit as the limiter uses it: one object per distinct limit, so a budget survives a reload that keeps it. */
export const appliedRouteLimit = limitApplier('route');

/** The key of a request's window on a route: its credential's, or its client address on a public route. */
export function routeLimitKey(route: CompiledRoute, principal: Readonly<{ credentialId: string; orgId: string }> | null, address: string): RouteLimitKey {
  return principal === null
    ? { credentialId: `route:${route.id}:addr:${address}`, orgId: PUBLIC_SHARD }
    : { credentialId: `route:${route.id}:${principal.credentialId}`, orgId: principal.orgId };
}

export function createRouteLimitCheck(limiter: RateLimiter, onRefused: () => void): RouteLimitCheck {
  const settle = (route: CompiledRoute, verdict: RateVerdict): undefined => {
    if (verdict.allowed) return undefined;
    onRefused();
    const { count, windowSeconds } = verdict.limit;
    const who = route.credentials.kind === 'none' ? 'client address' : 'credential';
    throw new Problem('rateLimited', `This route allows ${count} requests per ${windowSeconds} s per ${who}; try again in ${verdict.resetSeconds} s.`, 'rate_limited', verdict.resetSeconds);
  };
  return (request, route) => {
    if (route.rateLimit === undefined) return undefined;
    const verdict = limiter.take(routeLimitKey(route, request.principal, request.ip), appliedRouteLimit(route.rateLimit));
    return verdict instanceof Promise ? verdict.then((v) => settle(route, v)) : settle(route, verdict);
  };
}
