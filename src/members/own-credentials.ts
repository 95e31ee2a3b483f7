/**
 * Whose password and second factor a login token's request acts on (issue 50): each member's
 * own. The first member's are its organization's, kept as before members; another member's are
 * read as an organization view with the member's e-mail and password hash and its `memberId`, so
 * the current-password check, the login limits (by that e-mail) and the password policy (the
 * organization's name, the member's e-mail) apply per member, unchanged.
 */
import { otherMemberId, type Member } from '../store/members.js';
import type { Organization } from '../store/store.js';

/** The organization, as its own credentials' holder, or one of its other members (`memberId`). */
export type CredentialOwner = Organization & Readonly<{ memberId?: string }>;

export function credentialOwner(org: Organization, member: Pick<Member, 'id' | 'email' | 'passwordHash'> | undefined): CredentialOwner {
  const other = otherMemberId(org.id, member?.id);
  if (other === undefined || member === undefined) return org;
  return { ...org, email: member.email, passwordHash: member.passwordHash, memberId: other };
}

/**
 * What a holder's sealed TOTP secret is bound to (credentials/mfa-secrets.ts's additional data):
 * its organization, and its member when another's, so a copy onto another holder does not open.
 */
export function sealedFor(orgId: string, memberId?: string): string {
  const other = otherMemberId(orgId, memberId);
  return other === undefined ? orgId : `${orgId} ${other}`;
}

/** The member other than the first whose own credentials a request acts on (role-guard.ts sets request.member); undefined for the organization's own. */
export function callersMemberId(request: Readonly<{ principal: { orgId: string } | null; member?: Pick<Member, 'id'> | undefined }>): string | undefined {
  return request.principal === null ? undefined : otherMemberId(request.principal.orgId, request.member?.id);
}
