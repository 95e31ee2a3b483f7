/**
 * Changing and resetting an organization's password (issue 31). Every new password goes through
 * the policy with the organization's name and e-mail as context, before argon2 (a refused one
 * costs no hash slot). Every change ends the organization's login sessions in the same store
 * step as the new hash, and the revocation reaches every replica as logout's does: the store
 * announces it, this replica applies it at once. API keys are separate credentials and stay.
 */
import type { PasswordPolicy } from '../credentials/password-policy.js';
import type { PasswordHasher } from '../credentials/passwords.js';
import { newResetToken, resetTokenHash } from '../credentials/reset-tokens.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import type { PasswordResetStore } from '../store/password-resets.js';
import type { Organization, Store } from '../store/store.js';
import type { LoginClient, SessionService } from './sessions.js';

/**
 * The password hash of an organization created without a password: not an argon2 hash, so no
 * password verifies against it (credentials/passwords.ts answers false) until a reset sets one.
 */
export const NO_PASSWORD_HASH = '!unset';

export type IssuedReset = Readonly<{ resetToken: string; expiresAt: string; sessionsEnded: number }>;

export function createPasswordChangeService(deps: {
  store: Store & PasswordResetStore;
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

  return {
    /** The policy's refusal for this organization's next password, if any (throws its 400). */
    async enforcePolicy(orgId: string, newPassword: string): Promise<Organization> {
      const org = await organization(orgId);
      policy.enforce(newPassword, org);
      return org;
    },

    /** Whether the password is the organization's current one (argon2, in the hasher's queue). */
    verifyCurrent: (org: Organization, password: string) => passwords.verify(org.passwordHash, password),

    /**
     * Sets the new password, ends every login session of the organization (the caller's too)
     * and opens one new session for the caller: its token, and how many sessions ended.
     */
    async change(orgId: string, newPassword: string, client: LoginClient): Promise<{ token: string; sessionsEnded: number }> {
      const revoked = await store.replacePassword(orgId, await passwords.hash(newPassword));
      if (revoked === undefined) throw new Problem('credentialInvalid', undefined, 'organization_gone');
      bus.applyLocally(revoked);
      return { token: await sessions.open(orgId, client), sessionsEnded: revoked.length };
    },

    /** A new one-time reset token for the organization (any earlier one stops working); every session ends. */
    async issueReset(orgId: string): Promise<IssuedReset> {
      const { token, tokenHash } = newResetToken(orgId);
      const expiresAt = now() + deps.resetTtlMs;
      const revoked = await store.createPasswordReset({ orgId, tokenHash, expiresAt });
      if (revoked === undefined) throw new Problem('organizationNotFound');
      bus.applyLocally(revoked);
      return { resetToken: token, expiresAt: new Date(expiresAt).toISOString(), sessionsEnded: revoked.length };
    },

    /**
     * Uses a reset token: the new password is set once, by the first use only. Anything else
     * (malformed, unknown, used, replaced, expired) is the one resetTokenInvalid.
     */
    async reset(resetToken: string, newPassword: string): Promise<{ orgId: string; sessionsEnded: number }> {
      const tokenHash = resetTokenHash(resetToken);
      const found = tokenHash === undefined ? undefined : await store.findPasswordReset(tokenHash);
      if (tokenHash === undefined || found === undefined) throw invalidToken();
      const org = await store.findOrganizationById(found.orgId);
      if (org === undefined) throw invalidToken();
      policy.enforce(newPassword, org);
      // Two racing uses both get here; the store lets exactly one of them through.
      const revoked = await store.consumePasswordReset(org.id, tokenHash, await passwords.hash(newPassword));
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
