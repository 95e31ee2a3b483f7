/**
 * The current password of a logged-in organization, judged as a login judges a password (issue
 * 31): counted against the login limits before it is judged (guards/login-throttle.ts), given back
 * only by the caller once what it guarded is done, and a wrong one audited under the caller's
 * event type and answered 403 with code 1217 (not 401: the caller's token is still good). One
 * place for the password change, the e-mail change and the second factor's changes.
 */
import type { FastifyRequest } from 'fastify';
import { actorOf, type AuditTrail } from '../audit/trail.js';
import { Problem } from '../problems.js';
import { normalizeEmail } from '../services/organizations.js';
import type { PasswordChangeService } from '../services/password-changes.js';
import type { Organization } from '../store/store.js';
import { credentialOwner, type CredentialOwner } from '../members/own-credentials.js';
import { throttleAddress } from './client-address.js';
import type { LoginAttempt, LoginThrottle } from './login-throttle.js';

export type CurrentPasswordDeps = Readonly<{
  throttle: LoginThrottle;
  passwords: Pick<PasswordChangeService, 'verifyCurrent'>;
  audit: AuditTrail;
}>;

/** The attempt of a right password (call `succeeded()` once done); throws 1217 for a wrong one. */
export async function judgeCurrentPassword(
  deps: CurrentPasswordDeps,
  request: FastifyRequest,
  org: Organization,
  currentPassword: string,
  /** The audit event of a wrong password: `password.change_failed`, `organization.email_change_failed`, … */
  failedType: string,
): Promise<LoginAttempt> {
  const address = throttleAddress(request.ip);
  const attempt = await deps.throttle.attempt(normalizeEmail(org.email), address);
  let valid: boolean;
  try {
    valid = await deps.passwords.verifyCurrent(org, currentPassword);
  } catch (error) {
    // Never judged (argon2's queue full): the attempt is not held against the organization.
    if (error instanceof Problem && error.problem === 'overloaded') await attempt.notJudged();
    throw error;
  }
  if (!valid) {
    deps.audit.record({ type: failedType, orgId: org.id, ...actorOf(request), details: { reason: 'bad_password' } });
    if (attempt.exhausted) {
      request.log.warn({ event: 'login.throttled', address }, 'repeated wrong current passwords');
      deps.audit.record({ type: 'login.throttled', orgId: org.id, ...actorOf(request) });
    }
    throw new Problem('currentPasswordWrong', 'The current password is not right.', 'bad_password');
  }
  return attempt;
}

/**
 * The caller's own credentials' holder (its login token's organization, found anew; or the member
 * the role guard found, issue 50: members/own-credentials.ts), its current password judged and
 * given back at once: for the second factor's changes, which guard nothing after the check.
 * An organization deleted under a live token is 401 (`organization_gone`), as the token is.
 */
export async function confirmCallersPassword(
  deps: CurrentPasswordDeps & Readonly<{ findOrganization: (orgId: string) => Promise<Organization | undefined> }>,
  request: FastifyRequest,
  currentPassword: string,
  failedType: string,
): Promise<CredentialOwner> {
  const found = await deps.findOrganization(request.principal!.orgId);
  if (found === undefined) throw new Problem('credentialInvalid', undefined, 'organization_gone');
  const org = credentialOwner(found, request.member);
  const attempt = await judgeCurrentPassword(deps, request, org, currentPassword, failedType);
  await attempt.succeeded();
  return org;
}
