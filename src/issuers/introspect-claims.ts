/**
 * An RFC 7662 answer with `active: true` checked as a JWT's claims are (verify.ts), so an opaque
 * token is held to the same issuer rules: `iss` exactly when the answer has one, any one of the
 * audiences in `aud` (required: a token the provider issued for another API is not one for this
 * one), `exp` and `nbf` within the clock skew when present, then the organization and scopes
 * (principalClaims). The subject is `sub`, or the `client_id` of a client-credentials token.
 */
import type { CompiledIssuer } from './types.js';
import { principalClaims, type RefusedIssuerToken, type VerifiedIssuerToken } from './verify.js';

const MAX_SUBJECT_LENGTH = 200;

export function checkIntrospected(answer: Readonly<Record<string, unknown>>, issuer: CompiledIssuer, nowMs: number): VerifiedIssuerToken | RefusedIssuerToken {
  const skewMs = issuer.clockSkewSeconds * 1000;
  if (answer.iss !== undefined && answer.iss !== issuer.issuer) return { ok: false, reason: 'issuer' };
  const aud = typeof answer.aud === 'string' ? [answer.aud] : Array.isArray(answer.aud) ? answer.aud : [];
  if (!aud.some((value) => typeof value === 'string' && issuer.audiences.includes(value))) return { ok: false, reason: 'audience' };
  const exp = numeric(answer.exp);
  const nbf = numeric(answer.nbf);
  if (exp === null || nbf === null) return { ok: false, reason: 'claims' };
  if (exp !== undefined && exp * 1000 + skewMs <= nowMs) return { ok: false, reason: 'expired' };
  if (nbf !== undefined && nbf * 1000 - skewMs > nowMs) return { ok: false, reason: 'not_yet_valid' };
  const subject = typeof answer.sub === 'string' && answer.sub !== '' ? answer.sub : answer.client_id;
  if (typeof subject !== 'string' || subject === '' || subject.length > MAX_SUBJECT_LENGTH) return { ok: false, reason: 'claims' };
  // Without `exp`, only the cache bound limits how long the answer is used (introspect.ts).
  const expiresAtMs = exp === undefined ? Number.POSITIVE_INFINITY : exp * 1000;
  return principalClaims(answer, issuer, subject, expiresAtMs);
}

/** A NumericDate claim: undefined when absent, null when present and not a finite number. */
function numeric(value: unknown): number | undefined | null {
  if (value === undefined) return undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
