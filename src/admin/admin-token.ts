import type { FastifyRequest } from 'fastify';
import { ANONYMOUS, GATEWAY, type AuditTrail } from '../audit/trail.js';
import { readBearer } from '../credentials/bearer.js';
import { secretsEqual } from '../credentials/digest.js';
import type { AdminRefusalThrottle } from '../guards/admin-refusal-throttle.js';
import { throttleAddress } from '../guards/client-address.js';
import { Problem } from '../problems.js';
import { addressPrefix } from '../services/client-description.js';

/** How the admin check ended for a request, for the ops port's access line (ops-server.ts). */
export type AdminOutcome = Readonly<{ accepted: true } | { accepted: false; reason: string }>;

const outcomes = new WeakMap<FastifyRequest, AdminOutcome>();

/** undefined: the request was no admin request (health, metrics, documents) or never got that far. */
export function adminOutcomeOf(request: FastifyRequest): AdminOutcome | undefined {
  return outcomes.get(request);
}

export type AdminTokenCheckDeps = Readonly<{
  adminToken: string;
  throttle: AdminRefusalThrottle;
  /** authgate_admin_refusals_total, by a bounded reason. */
  countRefusal: (reason: string) => void;
  trail: Pick<AuditTrail, 'record'>;
}>;

/**
 * The admin API's only credential: AUTHGATE_ADMIN_TOKEN, compared in constant time. A refusal
 * leaves a trace: a warning log line, the metric and an audit event with no organization, each
 * with the reason, the route and the client's address, never the token that was sent. Refusals
 * are limited per address (guards/admin-refusal-throttle.ts).
 */
export function createAdminTokenCheck(deps: AdminTokenCheckDeps) {
  return async function checkAdminToken(request: FastifyRequest): Promise<void> {
    const route = request.routeOptions.url ?? 'unmatched';
    const address = throttleAddress(request.ip);
    let attempt;
    try {
      attempt = await deps.throttle.attempt(address);
    } catch (error) {
      if (error instanceof Problem) {
        outcomes.set(request, { accepted: false, reason: 'admin_throttled' });
        deps.countRefusal('throttled');
      }
      throw error;
    }
    const bearer = readBearer(request.headers.authorization, request.raw.rawHeaders);
    if (bearer.ok && secretsEqual(bearer.token, deps.adminToken)) {
      outcomes.set(request, { accepted: true });
      await attempt.accepted();
      return;
    }
    const reason = bearer.ok ? 'bad_admin_token' : bearer.reason;
    outcomes.set(request, { accepted: false, reason });
    deps.countRefusal(reason);
    request.log.warn({ event: 'admin.refused', reason, address, route }, 'admin request refused');
    const network = addressPrefix(request.ip);
    deps.trail.record({ type: 'admin.refused', actor: 'anonymous', actorDetail: ANONYMOUS, network, details: { reason, route } });
    if (attempt.exhausted) {
      // Once per window and address: the 429s after it are in the access log and the metric.
      request.log.warn({ event: 'admin.throttled', address }, 'repeated refused admin requests');
      deps.trail.record({ type: 'admin.throttled', actor: 'anonymous', actorDetail: GATEWAY, network });
    }
    throw new Problem('adminTokenInvalid', 'Send Authorization: Bearer <AUTHGATE_ADMIN_TOKEN>.', reason);
  };
}
