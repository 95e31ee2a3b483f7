/**
 * The members' own passwords (issue 50): a member other than the first changes its password and
 * is given an operator's reset token as an organization is (store/password-resets.ts). The first
 * member's password is its organization's and keeps PasswordResetStore's steps unchanged.
 * Implemented by memory/member-passwords.ts and redis/member-passwords.ts.
 *
 * A member has at most one live reset, kept as the hash of its token (`<shard tag of its
 * organization>.<digest>`, credentials/reset-tokens.ts) like an organization's:
 * PasswordResetStore.findPasswordReset finds it and names the member. Ending the member's
 * sessions is the caller's (services/member-passwords.ts), by the member's session links.
 */
import type { PasswordReset } from './password-resets.js';

export type MemberPasswordReset = PasswordReset & Readonly<{ memberId: string }>;

export interface MemberPasswordStore {
  /** Sets the member's password hash (an earlier reset works no more): false when there is no such member. */
  setMemberPassword(orgId: string, memberId: string, passwordHash: string): Promise<boolean>;
  /** Records the member's reset (an earlier one of it works no more): false when there is no such member. */
  createMemberPasswordReset(reset: MemberPasswordReset): Promise<boolean>;
  /**
   * Uses the reset: only when it is the member's live one, it is removed and the password hash
   * set, in one step, so of two racing uses exactly one gets true.
   */
  consumeMemberPasswordReset(orgId: string, memberId: string, tokenHash: string, passwordHash: string): Promise<boolean>;
}
