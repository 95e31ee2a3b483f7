/**
 * Passkeys as a second factor (issue 32): registration (options, then the authenticator's
 * response), rename, removal, and the login's options and verification. The WebAuthn checks are
 * @simplewebauthn/server's (origin, RP ID, challenge, user presence and verification, signature,
 * counter); what decides across replicas is the store's: the pending registration is taken once,
 * and a use's signature counter is checked and stored in one step (store/passkeys.ts usePasskey).
 * Challenges live in the store, never in this process: the next call may reach another replica.
 * Each member has its own passkeys (issue 50): every method takes the member (`memberId`, absent
 * for the organization's own, its first member's), and a member's are registered under its own
 * user handle, so an authenticator keeps the organization's and a member's apart.
 */
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { newRecoveryCodes, recoveryCodeHash } from '../credentials/mfa-tokens.js';
import type { Logger } from '../observability/logging.js';
import { Problem } from '../problems.js';
import { MAX_PASSKEYS_PER_ORGANIZATION, type Passkey, type PasskeyStore } from '../store/passkeys.js';
import type { CredentialOwner } from '../members/own-credentials.js';
import { otherMemberId } from '../store/members.js';

type WebAuthn = typeof import('@simplewebauthn/server');
let webAuthn: Promise<WebAuthn> | undefined;

/**
 * @simplewebauthn/server, loaded by the first passkey operation (or by main.ts right after the
 * start, where passkeys are offered): with its ASN.1 and X.509 libraries it is ~250 of the ~1,240
 * modules the gateway loaded, 0.35 s of CPU at every start (and in every test process building a
 * gateway) for a feature many deployments do not offer.
 */
export const loadWebAuthn = (): Promise<WebAuthn> => (webAuthn ??= import('@simplewebauthn/server'));

/** How long a registration may take between its options and its response (issue 32: 5 minutes). */
const REGISTRATION_TTL_MS = 5 * 60_000;
/** EdDSA, ES256, RS256: offered and accepted the same, whatever the runtime could add. */
const ALGORITHMS = [-8, -7, -257];
const TRANSPORTS: ReadonlySet<string> = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

export type RelyingParty = Readonly<{ rpId: string; origins: readonly string[]; name: string }>;
/** What the organization and the operator see of a passkey: never its key. */
export type PasskeyView = Readonly<{ id: string; name: string; createdAt: string; lastUsedAt: string | null }>;

export const viewOf = (passkey: Passkey): PasskeyView => ({
  id: passkey.id,
  name: passkey.name,
  createdAt: new Date(passkey.createdAt).toISOString(),
  lastUsedAt: passkey.lastUsedAt === null ? null : new Date(passkey.lastUsedAt).toISOString(),
});

/**
 * The user handle passkeys are registered with: the organization id (a member's: its member id),
 * so an assertion names whose it is, and an authenticator holding both keeps them apart.
 */
const userHandleOf = (orgId: string, memberId?: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(otherMemberId(orgId, memberId) ?? orgId, 'utf8'));

export function createPasskeyService(deps: { store: PasskeyStore; rp: RelyingParty | undefined; now: () => number; logger?: Logger }) {
  const { store, rp, now, logger } = deps;

  function relyingParty(): RelyingParty {
    if (rp === undefined) throw new Problem('passkeysNotConfigured', 'The operator has not set AUTHGATE_WEBAUTHN_RP_ID and AUTHGATE_WEBAUTHN_ORIGINS: passkeys cannot be registered.');
    return rp;
  }

  const descriptors = (passkeys: readonly Passkey[]) =>
    passkeys.map((passkey) => ({ id: passkey.id, transports: passkey.transports as AuthenticatorTransport[] }));

  /**
   * A library refusal for the log line: its message without the values it quotes (the origin
   * sent, the challenges: a live login's challenge is nobody's business in a log), bounded.
   */
  function refused(what: string, error: unknown): false {
    const reason = error instanceof Error ? error.message.replace(/"[^"]*"/g, '"…"').slice(0, 200) : 'not verified';
    logger?.info({ event: `passkey.${what}_refused`, reason }, `a passkey ${what} did not verify`);
    return false;
  }

  return {
    get offered(): boolean {
      return rp !== undefined;
    },

    async list(orgId: string, memberId?: string): Promise<PasskeyView[]> {
      return (await store.listPasskeys(orgId, memberId)).map(viewOf);
    },

    /** The options for navigator.credentials.create(); its challenge kept in the store for 5 minutes. */
    async beginRegistration(org: CredentialOwner): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const { rpId, name } = relyingParty();
      const kept = await store.listPasskeys(org.id, org.memberId);
      if (kept.length >= MAX_PASSKEYS_PER_ORGANIZATION) throw new Problem('passkeyLimitReached', `An organization may hold ${MAX_PASSKEYS_PER_ORGANIZATION} passkeys: remove one first.`);
      const { generateRegistrationOptions } = await loadWebAuthn();
      const options = await generateRegistrationOptions({
        rpName: name,
        rpID: rpId,
        userName: org.email,
        userID: userHandleOf(org.id, org.memberId),
        userDisplayName: org.name,
        attestationType: 'none',
        excludeCredentials: descriptors(kept),
        authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
        supportedAlgorithmIDs: ALGORITHMS,
      });
      await store.beginPasskeyRegistration(org.id, { challenge: options.challenge, expiresAt: now() + REGISTRATION_TTL_MS }, org.memberId);
      return options;
    },

    /**
     * The authenticator's response to the pending registration: the new passkey, and the recovery
     * codes (shown this once) when it is the organization's first factor.
     */
    async finishRegistration(orgId: string, response: RegistrationResponseJSON, name: string | undefined, memberId?: string): Promise<{ passkey: PasskeyView; recoveryCodes?: string[] }> {
      const { rpId, origins } = relyingParty();
      // Taken whatever follows: a registration's challenge is answered once, right or wrong.
      const pending = await store.takePasskeyRegistration(orgId, memberId);
      if (pending === undefined) throw new Problem('passkeyRegistrationInvalid', 'No passkey registration is pending (it expired after 5 minutes or was used): start again with POST /auth/mfa/passkeys/registration.', 'passkey_registration_invalid');
      const { verifyRegistrationResponse } = await loadWebAuthn();
      let verified: Awaited<ReturnType<WebAuthn['verifyRegistrationResponse']>> | false;
      try {
        verified = await verifyRegistrationResponse({
          response,
          expectedChallenge: pending.challenge,
          expectedOrigin: [...origins],
          expectedRPID: rpId,
          requireUserPresence: true,
          requireUserVerification: true,
          supportedAlgorithmIDs: ALGORITHMS,
        });
      } catch (error) {
        verified = refused('registration', error);
      }
      if (verified === false || !verified.verified) {
        throw new Problem('passkeyRejected', 'The passkey\'s response did not verify (origin, RP ID, challenge, user verification or attestation): nothing was stored. Start again.', 'passkey_rejected');
      }
      const { credential } = verified.registrationInfo;
      // WebAuthn bounds a credential id at 1023 bytes; the id is a path parameter later (PATCH, DELETE).
      if (credential.id.length > 1400) throw new Problem('passkeyRejected', 'The passkey\'s credential id is longer than WebAuthn allows.', 'passkey_rejected');
      const kept = await store.listPasskeys(orgId, memberId);
      const codes = newRecoveryCodes();
      const passkey: Passkey = {
        id: credential.id,
        name: name ?? `Passkey ${kept.length + 1}`,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: (response.response.transports ?? []).filter((t) => TRANSPORTS.has(t)).slice(0, TRANSPORTS.size),
        createdAt: now(),
        lastUsedAt: null,
      };
      const outcome = await store.addPasskey(orgId, passkey, codes.map((code) => recoveryCodeHash(orgId, code)), memberId);
      if (outcome === undefined) throw new Problem('credentialInvalid', undefined, 'organization_gone');
      if (outcome === 'duplicate') throw new Problem('passkeyAlreadyRegistered', 'This passkey is registered already.');
      if (outcome === 'limit') throw new Problem('passkeyLimitReached', `An organization may hold ${MAX_PASSKEYS_PER_ORGANIZATION} passkeys: remove one first.`);
      return { passkey: viewOf(passkey), ...(outcome === 'first' && { recoveryCodes: codes }) };
    },

    async rename(orgId: string, id: string, name: string, memberId?: string): Promise<PasskeyView> {
      const renamed = await store.renamePasskey(orgId, id, name, memberId);
      if (renamed === undefined) throw new Problem('passkeyNotFound');
      return viewOf(renamed);
    },

    async remove(orgId: string, id: string, memberId?: string): Promise<void> {
      if (!(await store.removePasskey(orgId, id, memberId))) throw new Problem('passkeyNotFound');
    },

    /** For a login: the options for navigator.credentials.get() over the organization's passkeys; undefined without any. */
    async loginOptions(orgId: string, memberId?: string): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
      if (rp === undefined) return undefined;
      const kept = await store.listPasskeys(orgId, memberId);
      if (kept.length === 0) return undefined;
      const { generateAuthenticationOptions } = await loadWebAuthn();
      return generateAuthenticationOptions({ rpID: rp.rpId, allowCredentials: descriptors(kept), userVerification: 'required' });
    },

    /**
     * A login's assertion against the challenge its mfaToken was given: true when it verifies for
     * one of the organization's passkeys (`kept`) and its counter was accepted (and stored) by the
     * store, which decides on the counter as it is then, not as `kept` read it.
     */
    async verifyLogin(orgId: string, challenge: string | undefined, response: AuthenticationResponseJSON, kept: readonly Passkey[], memberId?: string): Promise<boolean> {
      if (rp === undefined || challenge === undefined) return false;
      // `kept` is this organization's passkeys, just read: another organization's is not among them.
      const passkey = kept.find((candidate) => candidate.id === response.id);
      if (passkey === undefined) return false;
      const handle = response.response.userHandle;
      if (handle !== undefined && handle !== Buffer.from(userHandleOf(orgId, memberId)).toString('base64url')) return false;
      let counter: number;
      try {
        const { verifyAuthenticationResponse } = await loadWebAuthn();
        const verified = await verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge,
          expectedOrigin: [...rp.origins],
          expectedRPID: rp.rpId,
          credential: { id: passkey.id, publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')), counter: passkey.counter, transports: passkey.transports as AuthenticatorTransport[] },
          requireUserVerification: true,
        });
        if (!verified.verified) return refused('login', undefined);
        counter = verified.authenticationInfo.newCounter;
      } catch (error) {
        return refused('login', error);
      }
      // The counter read above may be stale by now (another replica): the store decides.
      return store.usePasskey(orgId, passkey.id, counter, now(), memberId);
    },
  };
}

export type PasskeyService = ReturnType<typeof createPasskeyService>;
