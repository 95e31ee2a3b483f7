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
import { confirmCallersPassword, type CurrentPasswordDeps } from '../guards/current-password.js';
import { Problem } from '../problems.js';
import type { MfaService } from '../services/mfa.js';
import type { Organization } from '../store/store.js';
import { callersMemberId, type CredentialOwner } from '../members/own-credentials.js';
import { problemOf } from './schemas.js';

/** What a change is called in the audit entry of a wrong proof. */
export type AuthenticatorChange = 'totp_enrolment' | 'totp_removal' | 'recovery_codes' | 'passkey_registration' | 'passkey_removal';

type Proof = Readonly<{ code?: string | undefined; recoveryCode?: string | undefined; passkey?: unknown }>;

/**
 * What a route guarded by a step-up declares of its refusals beside its own: the current password
 * (1217; counted against the login limits, 1108) and the proof of the second factor (1123, 1119
 * or 1120; the organization's bound on wrong proofs, 1121). Merged into a route's `response`.
 */
export const STEP_UP_REFUSALS = {
  403: problemOf('currentPasswordWrong', 'secondFactorRequired', 'mfaCodeRejected', 'loginTokenRequired'),
  429: problemOf('tooManyLoginAttempts', 'tooManySecondFactorFailures'),
};

/** The checks of the second factor's and the passkeys' routes, made once for both plugins. */
export function authenticatorChecks(
  deps: CurrentPasswordDeps & Readonly<{ findOrganization: (orgId: string) => Promise<Organization | undefined>; mfa: Pick<MfaService, 'proveSecondFactor'> }>,
) {
  /** The caller's own current password (a member's, issue 50), judged and counted as POST /auth/password does; its holder. */
  const currentPassword = (request: FastifyRequest, password: string): Promise<CredentialOwner> => confirmCallersPassword(deps, request, password, 'mfa.password_failed');
  return {
    currentPassword,
    /** The current password, then, while a second factor is enrolled, a proof of it: the holder (the organization, or the member). */
    async stepUp(request: FastifyRequest, body: Proof & Readonly<{ currentPassword: string }>, change: AuthenticatorChange): Promise<CredentialOwner> {
      const org = await currentPassword(request, body.currentPassword);
      await proveStepUp(deps, request, org.id, body, change);
      return org;
    },
  };
}

export async function proveStepUp(
  deps: Readonly<{ mfa: Pick<MfaService, 'proveSecondFactor'>; audit: AuditTrail }>,
  request: FastifyRequest,
  orgId: string,
  proof: Proof,
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
