// The authenticate stage of each protected route: Authorization header → request.principal, or a refusal.
import type { FastifyRequest } from 'fastify';
import { Problem } from '../problems.js';
import { StoreUnavailable } from '../store/store.js';
import { looksLikeApiKey } from './api-keys.js';
import { readBearer } from './bearer.js';
import { ALLOWED, type BearerRefusal, type DecisionKind, type DecisionOutcome, type DecisionReason, type DecisionRecorder } from './decisions.js';
import type { Principal } from './principal.js';
import type { CredentialResolver, Resolution } from './resolver.js';
import { takeSettledResolution } from './settled-resolution.js';

const ENVIRONMENT_DETAIL = {
  production: 'This credential belongs to the production environment.',
  sandbox: 'This credential belongs to the sandbox environment.',
} as const;

/** The detail of a 401 whose reason has words of its own; any other says 'invalid, expired or revoked'. */
const DENIAL_DETAIL: Partial<Record<DecisionReason, string>> = {
  expired_token: 'The token has expired; log in again.',
  expired_key: 'The API key has expired.',
};


/** The 401 of an Authorization header that is no one bearer token (also the edge proxies': edge-authz/). */
export function bearerProblem(reason: BearerRefusal): Problem {
  return new Problem(reason === 'missing' ? 'credentialMissing' : 'credentialInvalid', 'Send Authorization: Bearer <token or API key>.', reason);
}

/** The 401 of a credential the resolver refused (also the edge proxies': edge-authz/). */
export function denialProblem(resolution: Extract<Resolution, { ok: false }>): Problem {
  if (resolution.reason === 'wrong_environment' && resolution.environment !== undefined) {
    return new Problem('wrongEnvironment', ENVIRONMENT_DETAIL[resolution.environment], resolution.reason);
  }
  if (resolution.reason === 'unknown_organization') return new Problem('issuerOrganizationUnknown', 'The token names no organization known here.', resolution.reason);
  if (resolution.reason === 'issuer_keys_unavailable') {
    return new Problem('issuerKeysUnavailable', "The token's issuer keys are not available yet; try again.", resolution.reason, resolution.retryAfterSeconds ?? 1);
  }
  if (resolution.reason === 'issuer_introspection_unavailable') {
    return new Problem('issuerIntrospectionUnavailable', "The token's issuer could not be asked about it; try again.", resolution.reason, resolution.retryAfterSeconds ?? 1);
  }
  const detail = DENIAL_DETAIL[resolution.reason] ?? 'The credential is invalid, expired or revoked.';
  return new Problem('credentialInvalid', detail, resolution.reason);
}

/**
 * The onRequest stage that turns the Authorization header into request.principal, or refuses:
 * 401 for a missing, malformed, unknown, expired or revoked credential; 503 when the store
 * could not be asked (fail closed: never 401, never 200 for an unchecked credential).
 */
export function createAuthenticate(resolver: Pick<CredentialResolver, 'resolve'>, record: DecisionRecorder, noteKeyUse: (principal: Principal) => void = () => {}) {
  const decide = (request: FastifyRequest, kind: DecisionKind, outcome: DecisionOutcome, reason: DecisionReason) => {
    request.authDecision = { kind, outcome, reason };
    record(kind, outcome, reason);
  };
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const bearer = readBearer(request.headers.authorization, request.raw.rawHeaders);
    if (!bearer.ok) {
      decide(request, 'none', 'denied', bearer.reason);
      throw bearerProblem(bearer.reason);
    }
    let resolution;
    try {
      // A cache hit comes back synchronously: no await, so no extra turn of the microtask queue.
      // The fast lane may have read the store for this very request already: its answer, then.
      const resolved = takeSettledResolution(request.raw) ?? resolver.resolve(bearer.token, request.forwardedRoute?.credentials);
      resolution = resolved instanceof Promise ? await resolved : resolved;
    } catch (error) {
      if (error instanceof StoreUnavailable) {
        decide(request, looksLikeApiKey(bearer.token) ? 'api_key' : 'jwt', 'error', 'store_unavailable');
      }
      throw error;
    }
    if (!resolution.ok) {
      decide(request, resolution.kind, 'denied', resolution.reason);
      throw denialProblem(resolution);
    }
    const via = resolution.principal.via;
    request.principal = resolution.principal;
    request.authDecision = ALLOWED[via];
    record(via, 'allowed', 'ok');
    if (via === 'api_key') noteKeyUse(resolution.principal); // lastUsedAt: services/key-usage.ts
  };
}
