/**
 * The password part of the store contract (issue 31): replacing an organization's password hash,
 * and the one-time reset tokens an operator hands out. Implemented by memory/password-resets.ts
 * and redis/password-resets.ts.
 *
 * A reset token is never stored: only its hash (`<shard tag>.<digest>`, credentials/reset-tokens.ts),
 * under its organization's shard tag like a session id, so the organization's record, its
 * sessions and the reset are one atomic step on Redis Cluster too. An organization has at most
 * one live reset: a new one makes the earlier one worthless. Each step that changes a password
 * also ends every login session of the organization and says what it revoked, so the caller can
 * announce nothing more (the Redis scripts announce it themselves) and apply it locally.
 */
import type { Revoked } from './store.js';

export type PasswordReset = Readonly<{
  orgId: string;
  /** `<shard tag of orgId>.<digest of the token>`: what the store keys the reset by. */
  tokenHash: string;
  /** Epoch milliseconds; by the store's clock, the reset is worthless from then on. */
  expiresAt: number;
}>;

export interface PasswordResetStore {
  /**
   * Sets the organization's password hash and ends every one of its login sessions, in one step.
   * undefined when there is no such organization.
   */
  replacePassword(orgId: string, passwordHash: string): Promise<Revoked[] | undefined>;
  /**
   * Records the organization's reset (an earlier one of it works no more) and ends every one of
   * its login sessions, in one step. undefined when there is no such organization.
   */
  createPasswordReset(reset: PasswordReset): Promise<Revoked[] | undefined>;
  /**
   * The organization of a live reset, and its member when the reset is a member's other than the
   * first (store/member-passwords.ts): undefined when unknown, used, replaced or expired.
   */
  findPasswordReset(tokenHash: string): Promise<Readonly<{ orgId: string; expiresAt: number; memberId?: string }> | undefined>;
  /**
   * Uses the reset: only when it is orgId's live reset, it is removed, the password hash set and
   * every login session ended, in one step, so of two racing uses exactly one gets the revoked
   * list and the other undefined.
   */
  consumePasswordReset(orgId: string, tokenHash: string, passwordHash: string): Promise<Revoked[] | undefined>;
}
