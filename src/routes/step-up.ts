/**
 * The step-up of an authenticator change (issue 45): while an organization has a second factor,
 * adding, removing or regenerating an authenticator needs a proof of it beside the password, so a
 * stolen session with a phished password cannot mint a permanent factor. The proof is judged by
 * the MFA service under the organization's failure bound (guards/second-factor-bound.ts); here
 * it is audited: a wrong one as `mfa.code_failed`, a recovery code spent as `mfa.recovery_code_used`.
 */
import type { FastifyRequest } from 'fastify';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { actorOf, type AuditTrail } from '../audit/trail.js';
import { Problem } from '../problems.js';
import type { MfaService } from '../services/mfa.js';
import { callersMemberId } from '../members/own-credentials.js';

/** What a change is called in the audit entry of a wrong proof. */
export type AuthenticatorChange = 'totp_enrolment' | 'totp_removal' | 'recovery_codes' | 'passkey_registration' | 'passkey_removal';

export async function proveStepUp(
  deps: Readonly<{ mfa: Pick<MfaService, 'proveSecondFactor'>; audit: AuditTrail }>,
  request: FastifyRequest,
  orgId: string,
  proof: Readonly<{ code?: string | undefined; recoveryCode?: string | undefined; passkey?: unknown }>,
  change: AuthenticatorChange,
): Promise<void> {
  try {
    // The schema bounds the passkey's shape; the library reads it as what the browser sent.
    const input = { code: proof.code, recoveryCode: proof.recoveryCode, passkey: proof.passkey as AuthenticationResponseJSON | undefined };
    // The routes calling this take a login token only: its credential is the session's id; the
    // factor proved is the caller's own (a member's, issue 50).
    const used = await deps.mfa.proveSecondFactor(orgId, request.principal!.credentialId, input, callersMemberId(request));
    if (used === 'recovery_code') deps.audit.record({ type: 'mfa.recovery_code_used', orgId, ...actorOf(request), details: { change } });
  } catch (error) {
    auditWrongProof(deps.audit, request, orgId, error, change);
    throw error;
  }
}

/** A wrong code, recovery code (1119) or passkey (1120) is audited as `mfa.code_failed`; anything else was no judged proof. */
export function auditWrongProof(audit: AuditTrail, request: FastifyRequest, orgId: string, error: unknown, change: AuthenticatorChange): void {
  if (error instanceof Problem && (error.problem === 'mfaCodeRejected' || (error.problem === 'passkeyRejected' && error.reason === 'bad_passkey'))) {
    audit.record({ type: 'mfa.code_failed', orgId, ...actorOf(request), details: { reason: 'bad_code', change } });
  }
}
