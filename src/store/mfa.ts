/**
 * The second-factor part of the store contract (issue 32): an organization's TOTP factor, its
 * recovery codes, and the short-lived challenges (mfaTokens) a correct password hands out.
 * Implemented by memory/mfa.ts and redis/mfa.ts.
 *
 * Each member has its own second factor (issue 50): every factor method takes an optional last
 * `memberId`. Absent, or the first member's id (store/members.ts firstMemberId), it is the
 * organization's own factor, stored exactly as before members (no migration); another member's
 * is stored apart, keyed by the member, and goes with the member's removal.
 *
 * The store never sees a TOTP secret in the clear (the service encrypts it, credentials/mfa-secrets.ts),
 * a recovery code or an mfaToken: only their hashes. Every step that decides something is one
 * atomic step, so two replicas given the same code, the same recovery code or the same mfaToken
 * let exactly one of them through. A challenge hash is `<shard tag of its organization>.<digest>`
 * (credentials/mfa-tokens.ts), so it lives on its organization's shard.
 */

export type TotpFactor = Readonly<{
  /** The encrypted secret (opaque to the store). */
  secret: string;
  /** false while enrolment waits for its first correct code. */
  active: boolean;
  /** The last time step accepted (0 for none): a code of this step or an earlier one is refused. */
  lastStep: number;
  /** How many unused recovery codes are left. */
  recoveryCodesLeft: number;
}>;

export type MfaChallenge = Readonly<{
  orgId: string;
  /** The member whose password was right, when another than the first (issue 50). */
  memberId?: string;
  /** A digest of the password hash the check was made against: a changed password spends it. */
  passwordCheck: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  /** The WebAuthn challenge of the passkey options the login answered with, when it offered any. */
  passkeyChallenge?: string;
}>;

export interface MfaStore {
  findTotp(orgId: string, memberId?: string): Promise<TotpFactor | undefined>;
  /**
   * Keeps a new pending (inactive) secret, replacing an earlier pending one: 'pending'; 'active'
   * (nothing changed) when the organization already has an active factor; undefined when there
   * is no such organization (or member).
   */
  beginTotp(orgId: string, secret: string, memberId?: string): Promise<'pending' | 'active' | undefined>;
  /**
   * Activates the pending factor whose secret is `secret`, with `step` as its last used step,
   * only if `step` is later than its last one: 'first' when it is the organization's first
   * active factor (no passkey: store/passkeys.ts), then these recovery code hashes replace any;
   * 'added' when a passkey was there (its codes stay); false when nothing was done.
   */
  activateTotp(orgId: string, secret: string, step: number, recoveryCodeHashes: readonly string[], memberId?: string): Promise<'first' | 'added' | false>;
  /** Records `step` as used: true only when the factor is active and `step` is later than its last. */
  useTotpStep(orgId: string, step: number, memberId?: string): Promise<boolean>;
  /** How many unused recovery codes the organization has (whichever factor made them). */
  countRecoveryCodes(orgId: string, memberId?: string): Promise<number>;
  /** Uses a recovery code (removes it): true only for an unused code while any factor is active, once. */
  useRecoveryCode(orgId: string, codeHash: string, memberId?: string): Promise<boolean>;
  /** Replaces every recovery code while any factor (TOTP or passkey) is active: false when none is. */
  replaceRecoveryCodes(orgId: string, codeHashes: readonly string[], memberId?: string): Promise<boolean>;
  /** Removes the factor (and the recovery codes when no passkey remains): false when there was none. */
  removeTotp(orgId: string, memberId?: string): Promise<boolean>;

  createMfaChallenge(tokenHash: string, challenge: MfaChallenge): Promise<void>;
  /** A live challenge: undefined when unknown, used, spent or expired. */
  findMfaChallenge(tokenHash: string): Promise<MfaChallenge | undefined>;
  /** Counts a wrong code; the `limit`-th spends the challenge. The count so far, 0 when there is none. */
  failMfaChallenge(tokenHash: string, limit: number): Promise<number>;
  /** Uses the challenge: true for the first use only. */
  consumeMfaChallenge(tokenHash: string): Promise<boolean>;
}
