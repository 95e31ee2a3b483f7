/**
 * The one list of what a credential check decides: the credential's kind, the outcome and a
 * bounded reason. Every producer of a reason (bearer.ts, resolver.ts, authenticate.ts) takes it
 * from here, and so do the request context, the access log's authReason and the labels of
 * authgate_auth_decisions_total: a reason that is not here does not type-check. A new reason is
 * added here and to the README's list of reasons (a public contract, like the metric's name).
 */

/** The Authorization header could not be read as one bearer token (bearer.ts). */
export const BEARER_REFUSALS = ['missing', 'not_bearer', 'malformed', 'duplicate'] as const;
export type BearerRefusal = (typeof BEARER_REFUSALS)[number];

/** A bearer token that is not a valid credential here (resolver.ts). */
export const DENIAL_REASONS = [
  'malformed_key',
  'bad_checksum',
  'unknown_key',
  'expired_key',
  'invalid_token',
  'expired_token',
  'revoked_token',
  'wrong_environment',
  // Provider tokens (issue 49): the organization claim names no organization; the issuer's keys cannot be had (503).
  'unknown_organization',
  'issuer_keys_unavailable',
  // An opaque provider token whose issuer's introspection endpoint could not answer (503).
  'issuer_introspection_unavailable',
] as const;
export type DenialReason = (typeof DENIAL_REASONS)[number];

/** Every reason, in the README's order: `ok` for an allowed credential, `store_unavailable` for an error. */
export const DECISION_REASONS = ['ok', ...BEARER_REFUSALS, ...DENIAL_REASONS, 'store_unavailable'] as const;
export type DecisionReason = (typeof DECISION_REASONS)[number];

/** The kind of a credential, picked by its shape. */
export type CredentialKind = 'jwt' | 'api_key' | 'issuer_token';
/** `none` when no bearer token could be read. */
export type DecisionKind = CredentialKind | 'none';
export type DecisionOutcome = 'allowed' | 'denied' | 'error';

export type AuthDecision = Readonly<{ kind: DecisionKind; outcome: DecisionOutcome; reason: DecisionReason }>;

/** Told every decision: the gateway counts them (observability/instrumentation.ts). */
export type DecisionRecorder = (kind: DecisionKind, outcome: DecisionOutcome, reason: DecisionReason) => void;

/** The decision of every allowed request, one per credential kind (decisions are read-only). */
export const ALLOWED: Readonly<Record<CredentialKind, AuthDecision>> = {
  jwt: Object.freeze({ kind: 'jwt', outcome: 'allowed', reason: 'ok' }),
  api_key: Object.freeze({ kind: 'api_key', outcome: 'allowed', reason: 'ok' }),
  issuer_token: Object.freeze({ kind: 'issuer_token', outcome: 'allowed', reason: 'ok' }),
};
