/**
 * The passkey part of the store contract (issue 32): an organization's WebAuthn credentials as a
 * second factor, and its one pending registration. Implemented by memory/passkeys.ts and
 * redis/passkeys.ts.
 *
 * Passkeys share the organization's recovery codes with TOTP (store/mfa.ts): the codes are set
 * with the first active factor (addPasskey or activateTotp when the other has nothing), kept while
 * any factor is active, and removed with the last one. What decides is one atomic step each: a
 * pending registration is taken once (two replicas given the same response store one passkey),
 * and a use checks and stores the signature counter in one step (of two replicas given one
 * assertion with a counter, one wins).
 *
 * Each member has its own passkeys (issue 50): every method takes an optional last `memberId`,
 * as the MFA store's (store/mfa.ts): absent or the first member's, the organization's own.
 */

export type Passkey = Readonly<{
  /** The credential id, base64url. */
  id: string;
  name: string;
  /** The COSE public key, base64url (not a secret). */
  publicKey: string;
  /** The signature counter last accepted (0 for an authenticator that keeps none). */
  counter: number;
  /** What the browser said it can reach the authenticator by (`internal`, `usb`, `hybrid`…). */
  transports: readonly string[];
  /** Epoch milliseconds. */
  createdAt: number;
  lastUsedAt: number | null;
}>;

export type PasskeyRegistration = Readonly<{ challenge: string; expiresAt: number }>;

/** How many passkeys one organization may hold (a bound on the store and on the login's options). */
export const MAX_PASSKEYS_PER_ORGANIZATION = 10;

export interface PasskeyStore {
  /** The organization's passkeys, oldest first. */
  listPasskeys(orgId: string, memberId?: string): Promise<Passkey[]>;
  /** Keeps the one pending registration of the organization, replacing an earlier one. */
  beginPasskeyRegistration(orgId: string, registration: PasskeyRegistration, memberId?: string): Promise<void>;
  /** Takes the pending registration (it is gone after): undefined when none, taken or expired. */
  takePasskeyRegistration(orgId: string, memberId?: string): Promise<PasskeyRegistration | undefined>;
  /**
   * Adds a passkey. 'first' when it is the organization's first active factor (no active TOTP,
   * no passkey): then these recovery code hashes replace any; 'added' otherwise (codes
   * untouched); 'duplicate' when the organization has that credential id; 'limit' at
   * MAX_PASSKEYS_PER_ORGANIZATION; undefined when there is no such organization (or member).
   */
  addPasskey(orgId: string, passkey: Passkey, recoveryCodeHashes: readonly string[], memberId?: string): Promise<'first' | 'added' | 'duplicate' | 'limit' | undefined>;
  /** Renames one: the passkey as it is now, undefined when the organization has no such one. */
  renamePasskey(orgId: string, id: string, name: string, memberId?: string): Promise<Passkey | undefined>;
  /** Removes one (and the recovery codes when it was the last factor): false when there was none. */
  removePasskey(orgId: string, id: string, memberId?: string): Promise<boolean>;
  /**
   * A verified use: stores `counter` and `at` as its last use, only if the counter is above the
   * stored one or both are 0 (an authenticator without a counter). false when refused or unknown.
   */
  usePasskey(orgId: string, id: string, counter: number, at: number, memberId?: string): Promise<boolean>;
  /** The operator's removal: TOTP (pending too), every passkey, recovery codes, a pending registration. */
  removeSecondFactors(orgId: string, memberId?: string): Promise<boolean>;
}
