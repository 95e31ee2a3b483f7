// The proof of the second factor an authenticator change asks for while one is enrolled (issue
// 45): adding or removing a passkey, setting up an authenticator app beside a passkey, new
// recovery codes. One field takes the app's current code or a recovery code; left empty, the
// passkey confirms it (POST /auth/mfa/step-up's options, the browser's ceremony). Without a
// factor there is no field, and the forms send the password alone, as before.
import { call } from './api.js';
import { codeOf, field, type Field } from './fields.js';
import { authenticate, describeCeremonyError, webAuthnAvailable } from './webauthn.js';

/** The refusals about the proof (docs/errors.md): none given, a wrong code, a passkey not accepted. */
const PROOF_CODES: ReadonlySet<number> = new Set([1123, 1119, 1120]);

export type Factors = Readonly<{ totp: boolean; passkey: boolean }>;

export type Proof = Readonly<{
  field: Field;
  /** Why the form cannot be sent as it is (nothing typed and no passkey to use), or undefined. */
  missing(): string | undefined;
  /** The body's proof: `{code}`, `{recoveryCode}`, or the passkey's assertion; `{ceremony}` says why the passkey was not used. */
  read(): Promise<Record<string, unknown> | { ceremony: string }>;
  /** Whether the API's refusal is about the proof (shown under its field). */
  owns(error: unknown): boolean;
}>;

/** The proof field of a change, or undefined when the organization has no second factor. */
export function proofField(id: string, factors: Factors, purpose: string): Proof | undefined {
  if (!factors.totp && !factors.passkey) return undefined;
  const passkey = factors.passkey && webAuthnAvailable();
  const label = factors.totp ? `Code from the app or a recovery code (${purpose})` : `Recovery code (${purpose})`;
  const hint = `Your second factor confirms this change.${passkey ? ' Leave this empty to use your passkey instead.' : ''}`;
  const proof = field({ id, label, hint, input: { type: 'text', name: 'second-factor', autocomplete: 'one-time-code', maxlength: 64, spellcheck: 'false', required: !passkey } });
  return {
    field: proof,
    missing: () => (proof.input.value.trim() !== '' || passkey ? undefined : factors.totp ? 'Enter the code the app shows, or a recovery code.' : 'Enter a recovery code.'),
    async read() {
      const value = proof.input.value.trim();
      proof.input.value = '';
      // Six digits (spaces as apps show them) are the app's code; anything else a recovery code.
      if (value !== '') return /^[0-9 ]+$/.test(value) && value.replace(/ /g, '').length === 6 ? { code: value.replace(/ /g, '') } : { recoveryCode: value };
      const { passkeyOptions } = await call<{ passkeyOptions: unknown }>('POST', '/auth/mfa/step-up');
      try {
        return { passkey: await authenticate(passkeyOptions) };
      } catch (error) {
        return { ceremony: describeCeremonyError(error) };
      }
    },
    owns: (error) => PROOF_CODES.has(codeOf(error) ?? 0),
  };
}

/** What GET /auth/mfa says is enrolled, as a proof needs it. */
export const factorsOf = (mfa: Readonly<{ totp: Readonly<{ enabled: boolean }>; passkeys?: readonly unknown[] }>): Factors => ({ totp: mfa.totp.enabled, passkey: (mfa.passkeys?.length ?? 0) > 0 });

/** Sends with the proof's fields (none without a factor); `{ceremony}` when the passkey was not used. */
export async function withProof<T extends object>(proof: Proof | undefined, send: (proven: Record<string, unknown>) => Promise<T>): Promise<T | { ceremony: string }> {
  const proven = proof === undefined ? {} : await proof.read();
  if (typeof proven['ceremony'] === 'string') return { ceremony: proven['ceremony'] };
  return send(proven);
}

/** The fields a form clears and places refusals under: the password's, and the proof's when there is one. */
export const withProofField = (fields: readonly Field[], proof: Proof | undefined): Field[] => (proof === undefined ? [...fields] : [...fields, proof.field]);
