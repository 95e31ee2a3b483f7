/**
 * What the second factor's service answers and takes (services/mfa.ts): the shapes of a login's
 * challenge, of the status, of a proof, and which methods a login can finish with.
 */
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { PasskeyView } from './passkeys.js';

export type MfaChallengeAnswer = Readonly<{ mfaToken: string; methods: string[]; expiresIn: number; passkeyOptions?: PublicKeyCredentialRequestOptionsJSON }>;
export type MfaStatus = Readonly<{ methods: string[]; totp: { enabled: boolean; pending: boolean }; recoveryCodesLeft: number; passkeys: PasskeyView[] }>;
export type SecondFactorInput = Readonly<{ code?: string | undefined; recoveryCode?: string | undefined; passkey?: AuthenticationResponseJSON | undefined }>;
export type SecondFactorUsed = 'totp' | 'recovery_code' | 'passkey';

/** What a login can finish with, in the order the issue names them. */
export function methodsOf(totp: boolean, passkeys: boolean): string[] {
  if (!totp && !passkeys) return [];
  return [...(totp ? ['totp'] : []), 'recovery_code', ...(passkeys ? ['passkey'] : [])];
}

