/**
 * Changing and resetting a password (issue 31): the organization's, which is its first member's,
 * and each other member's own (issue 50). Every new password goes through the policy with the
 * organization's name and the holder's e-mail as context, before argon2 (a refused one costs no
 * hash slot). The organization's change ends every one of its login sessions in the same store
 * step as the new hash; a member's ends that member's sessions (services/member-sessions.ts).
 * Either revocation reaches every replica as logout's does: the store announces it, this replica
 * applies it at once. API keys are separate credentials and stay.
 */
import type { PasswordPolicy } from '../credentials/password-policy.js';
import type { PasswordHasher } from '../credentials/passwords.js';
import { newResetToken, resetTokenHash } from '../credentials/reset-tokens.js';
import { credentialOwner, type CredentialOwner } from '../members/own-credentials.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import type { MemberPasswordStore } from '../store/member-passwords.js';
import { otherMemberId, type MemberStore } from '../store/members.js';
import type { PasswordResetStore } from '../store/password-resets.js';
import type { Organization, Store } from '../store/store.js';
import { endMemberSessions } from './member-sessions.js';
import type { LoginClient, SessionService } from './sessions.js';

/**
 * The password hash of an organization created without a password: not an argon2 hash, so no
 * password verifies against it (credentials/passwords.ts answers false) until a reset sets one.
 */
export const NO_PASSWORD_HASH = '!unset';

export type IssuedReset = Readonly<{ resetToken: string; expiresAt: string; sessionsEnded: number }>;

export function createPasswordChangeService(deps: {
  store: Store & PasswordResetStore & MemberPasswordStore & MemberStore;
  bus: Pick<InvalidationBus, 'applyLocally'>;
  passwords: PasswordHasher;
  policy: PasswordPolicy;
  sessions: Pick<SessionService, 'open'>;
  now: () => number;
  /** AUTHGATE_PASSWORD_RESET_TTL_SECONDS, in milliseconds. */
  resetTtlMs: number;
}) {
  const { store, bus, passwords, policy, sessions, now } = deps;

  async function organization(orgId: string): Promise<Organization> {
    const org = await store.findOrganizationById(orgId);
    if (org === undefined) throw new Problem('organizationNotFound');
    return org;
  }

  /** The organization's own password's holder, or its member's (memberNotFound when there is none). */
  async function owner(orgId: string, memberId: string | undefined): Promise<CredentialOwner> {
    const org = await organization(orgId);
    const other = otherMemberId(orgId, memberId);
    if (other === undefined) return org;
    const member = await store.findMember(orgId, other);
    if (member === undefined) throw new Problem('memberNotFound');
    return credentialOwner(org, member);
  }

  const endSessionsOf = (orgId: string, memberId: string) => endMemberSessions({ store, bus }, orgId, memberId);

  return {
    /**
     * The policy's refusal for the next password of the organization (or of its member), if any
     * (throws its 400); the holder, whose current password the caller may check next.
     */
    async enforcePolicy(orgId: string, newPassword: string, memberId?: string): Promise<CredentialOwner> {
      const held = await owner(orgId, memberId);
      policy.enforce(newPassword, held);
      return held;
    },

    /** Whether the password is the holder's current one (argon2, in the hasher's queue). */
    verifyCurrent: (org: Organization, password: string) => passwords.verify(org.passwordHash, password),

    /**
     * Sets the new password and ends the holder's login sessions (the caller's too): for the
     * organization every one of its sessions, for a member its own. Opens one new session for the
     * caller: its token, and how many sessions ended.
     */
    async change(orgId: string, newPassword: string, client: LoginClient, memberId?: string): Promise<{ token: string; sessionsEnded: number }> {
      const other = otherMemberId(orgId, memberId);
      const hash = await passwords.hash(newPassword);
      if (other !== undefined) {
        if (!(await store.setMemberPassword(orgId, other, hash))) throw new Problem('credentialInvalid', undefined, 'member_removed');
        const sessionsEnded = await endSessionsOf(orgId, other);
        return { token: await sessions.open(orgId, client, other), sessionsEnded };
      }
      const revoked = await store.replacePassword(orgId, hash);
      if (revoked === undefined) throw new Problem('credentialInvalid', undefined, 'organization_gone');
      bus.applyLocally(revoked);
      return { token: await sessions.open(orgId, client), sessionsEnded: revoked.length };
    },

    /**
     * A new one-time reset token for the organization, or for one member (any earlier one of it
     * stops working); every session of the organization ends, or every session of the member.
     */
    async issueReset(orgId: string, memberId?: string): Promise<IssuedReset> {
      const other = otherMemberId(orgId, memberId);
      const { token, tokenHash } = newResetToken(orgId);
      const expiresAt = now() + deps.resetTtlMs;
      let sessionsEnded: number;
      if (other !== undefined) {
        if (!(await store.createMemberPasswordReset({ orgId, memberId: other, tokenHash, expiresAt }))) throw new Problem('memberNotFound');
        sessionsEnded = await endSessionsOf(orgId, other);
      } else {
        const revoked = await store.createPasswordReset({ orgId, tokenHash, expiresAt });
        if (revoked === undefined) throw new Problem('organizationNotFound');
        bus.applyLocally(revoked);
        sessionsEnded = revoked.length;
      }
      return { resetToken: token, expiresAt: new Date(expiresAt).toISOString(), sessionsEnded };
    },

    /**
     * Uses a reset token: the new password is set once, by the first use only. Anything else
     * (malformed, unknown, used, replaced, expired) is the one resetTokenInvalid.
     */
    async reset(resetToken: string, newPassword: string): Promise<{ orgId: string; memberId?: string; sessionsEnded: number }> {
      const tokenHash = resetTokenHash(resetToken);
      const found = tokenHash === undefined ? undefined : await store.findPasswordReset(tokenHash);
      if (tokenHash === undefined || found === undefined) throw invalidToken();
      const org = await store.findOrganizationById(found.orgId);
      const member = found.memberId === undefined || org === undefined ? undefined : await store.findMember(org.id, found.memberId);
      if (org === undefined || (found.memberId !== undefined && member === undefined)) throw invalidToken();
      policy.enforce(newPassword, credentialOwner(org, member));
      const hash = await passwords.hash(newPassword);
      if (member !== undefined) {
        // Two racing uses both get here; the store lets exactly one of them through.
        if (!(await store.consumeMemberPasswordReset(org.id, member.id, tokenHash, hash))) throw invalidToken();
        return { orgId: org.id, memberId: member.id, sessionsEnded: await endSessionsOf(org.id, member.id) };
      }
      const revoked = await store.consumePasswordReset(org.id, tokenHash, hash);
      if (revoked === undefined) throw invalidToken();
      bus.applyLocally(revoked);
      return { orgId: org.id, sessionsEnded: revoked.length };
    },
  };
}

function invalidToken(): Problem {
  return new Problem('resetTokenInvalid', 'The reset token is not valid: it may have been used, replaced by a newer one, or have expired. Ask the operator for a new one.', 'reset_token_invalid');
}

export type PasswordChangeService = ReturnType<typeof createPasswordChangeService>;
