/**
 * The second factor (issue 32): TOTP enrolment, the login's second step (a TOTP code, a recovery
 * code or a passkey: services/passkeys.ts verifies that), recovery codes (the organization's
 * second factor's as a whole: made with its first factor, gone with its last), removal. TOTP codes come from the otpauth library (RFC 6238, SHA-1, 6 digits, 30 s), accepted
 * one step either way of now; the step a code was accepted at is recorded in the store in one
 * atomic step (store/mfa.ts useTotpStep), so a code works once, also across replicas. The secret
 * is sealed with AES-256-GCM before it reaches the store (credentials/mfa-secrets.ts).
 * Every proof of the second factor (a login's, a removal's, an authenticator change's step-up) is
 * judged under the organization's bound on wrong proofs, and mfaTokens are issued under its
 * bound too (guards/second-factor-bound.ts, issue 45). Each member has its own second factor
 * (issue 50): `memberId` names it everywhere (absent: the organization's own, its first member's).
 */
import * as OTPAuth from 'otpauth';
import { sha256Base64url } from '../credentials/digest.js';
import { shardTagOf, tagged } from '../store/shard-tag.js';
import { newMfaToken, mfaTokenHash, newRecoveryCodes, passwordCheckOf, recoveryCodeHash } from '../credentials/mfa-tokens.js';
import type { SecretBox } from '../credentials/mfa-secrets.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import type { MfaChallenge, MfaStore, TotpFactor } from '../store/mfa.js';
import type { Organization, Store } from '../store/store.js';
import { otherMemberId, type MemberStore } from '../store/members.js';
import { credentialOwner, sealedFor, type CredentialOwner } from '../members/own-credentials.js';
import { endMemberSessions } from './member-sessions.js';
import type { PasskeyStore } from '../store/passkeys.js';
import type { LoginClient, SessionService } from './sessions.js';
import type { SecondFactorBound } from '../guards/second-factor-bound.js';
import { type PasskeyService, viewOf } from './passkeys.js';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { methodsOf, type MfaChallengeAnswer, type MfaStatus, type SecondFactorInput, type SecondFactorUsed } from './mfa-shapes.js';

const PERIOD_SECONDS = 30;
/** How long an mfaToken lives, and how many wrong codes spend it (issue 32). */
export const MFA_TOKEN_TTL_SECONDS = 300;
export const MFA_TOKEN_MAX_FAILURES = 5;

export function createMfaService(deps: {
  store: Store & MfaStore & PasskeyStore & Pick<MemberStore, 'findMember' | 'listMembers' | 'linkedSessionIds'>;
  passkeys: Pick<PasskeyService, 'loginOptions' | 'verifyLogin'>;
  bus: Pick<InvalidationBus, 'applyLocally'>;
  box: SecretBox;
  sessions: Pick<SessionService, 'open' | 'endAll'>;
  /** The organization's bound on wrong proofs and on mfaTokens issued (issue 45). */
  bound: SecondFactorBound;
  now: () => number;
  /** The issuer shown by authenticator apps (the otpauth URI's). */
  issuer: string;
}) {
  const { store, box, sessions, now, issuer, passkeys, bound } = deps;

  function totpOf(orgId: string, secret: string, label = orgId): OTPAuth.TOTP {
    return new OTPAuth.TOTP({ issuer, label, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: OTPAuth.Secret.fromBase32(secret) });
  }

  /** The time step a code is right for (now ± one step), or undefined. */
  function stepOf(orgId: string, factor: TotpFactor, code: string, memberId?: string): number | undefined {
    if (!/^[0-9]{6}$/.test(code)) return undefined;
    const secret = box.open(sealedFor(orgId, memberId), factor.secret);
    // A secret no configured key opens: AUTHGATE_MFA_ENCRYPTION_KEY changed without keeping the old one.
    if (secret === undefined) throw new Error('a TOTP secret no configured AUTHGATE_MFA_ENCRYPTION_KEY opens');
    const timestamp = now();
    const delta = totpOf(orgId, secret).validate({ token: code, timestamp, window: 1 });
    if (delta === null) return undefined;
    return OTPAuth.TOTP.counter({ period: PERIOD_SECONDS, timestamp }) + delta;
  }

  async function activeFactor(orgId: string, memberId?: string): Promise<TotpFactor> {
    const factor = await store.findTotp(orgId, memberId);
    if (factor === undefined || !factor.active) throw new Problem('totpNotEnabled');
    return factor;
  }

  /** A code of the active factor, used up: true when accepted. */
  async function useCode(orgId: string, factor: TotpFactor, code: string, memberId?: string): Promise<boolean> {
    const step = stepOf(orgId, factor, code, memberId);
    return step !== undefined && (await store.useTotpStep(orgId, step, memberId));
  }

  /** Whether `input` proves the organization's second factor (a TOTP step or a recovery code is used up when it does). */
  async function judge(orgId: string, factor: TotpFactor | undefined, kept: Awaited<ReturnType<PasskeyStore['listPasskeys']>>, input: SecondFactorInput, passkeyChallenge: string | undefined, memberId?: string): Promise<{ right: boolean; used: SecondFactorUsed }> {
    if (input.recoveryCode !== undefined) return { used: 'recovery_code', right: await store.useRecoveryCode(orgId, recoveryCodeHash(orgId, input.recoveryCode), memberId) };
    if (input.passkey !== undefined) return { used: 'passkey', right: await passkeys.verifyLogin(orgId, passkeyChallenge, input.passkey, kept, memberId) };
    return { used: 'totp', right: factor?.active === true && (await useCode(orgId, factor, input.code ?? '', memberId)) };
  }

  /**
   * A proof judged under the organization's bound: counted first (1121 when spent), the count
   * reset by a right one, kept by a wrong one, given back when judging failed (never judged).
   */
  async function judged<T extends { right: boolean }>(orgId: string, judgeIt: () => Promise<T>, memberId?: string): Promise<T> {
    const proof = await bound.proof(orgId, memberId);
    let outcome: T;
    try {
      outcome = await judgeIt();
    } catch (error) {
      await proof.notJudged();
      throw error;
    }
    if (outcome.right) await proof.succeeded();
    return outcome;
  }

  async function storeRecoveryCodes(orgId: string): Promise<{ codes: string[]; hashes: string[] }> {
    const codes = newRecoveryCodes();
    return { codes, hashes: codes.map((code) => recoveryCodeHash(orgId, code)) };
  }

  return {
    /**
     * After a correct password: the challenge to answer when the organization has an active
     * factor, undefined when it has none (then the login goes on exactly as before).
     */
    async challengeFor(org: Organization & Readonly<{ memberId?: string | undefined }>): Promise<MfaChallengeAnswer | undefined> {
      const memberId = otherMemberId(org.id, org.memberId);
      const [factor, passkeyOptions] = await Promise.all([store.findTotp(org.id, memberId), passkeys.loginOptions(org.id, memberId)]);
      const totp = factor?.active === true;
      if (!totp && passkeyOptions === undefined) return undefined;
      // Bound to the member's own password hash, when it was the member's.
      const member = memberId === undefined ? undefined : await store.findMember(org.id, memberId);
      if (memberId !== undefined && member === undefined) return undefined;
      // Bounded per second factor (1122): one with a leaked password cannot fill the store with challenges.
      await bound.issue(org.id, MFA_TOKEN_TTL_SECONDS * 1000, memberId);
      const { token, tokenHash } = newMfaToken(org.id);
      // The passkey options' challenge is kept with the mfaToken's: the assertion must answer this login's.
      await store.createMfaChallenge(tokenHash, {
        orgId: org.id,
        ...(memberId !== undefined && { memberId }),
        passwordCheck: passwordCheckOf((member ?? org).passwordHash),
        expiresAt: now() + MFA_TOKEN_TTL_SECONDS * 1000,
        ...(passkeyOptions !== undefined && { passkeyChallenge: passkeyOptions.challenge }),
      });
      return { mfaToken: token, methods: methodsOf(totp, passkeyOptions !== undefined), expiresIn: MFA_TOKEN_TTL_SECONDS, ...(passkeyOptions !== undefined && { passkeyOptions }) };
    },

    /** The live challenge of an mfaToken and whose it is (the organization, or its member); mfaTokenInvalid otherwise. */
    async challenge(mfaToken: string): Promise<{ tokenHash: string; challenge: MfaChallenge; org: CredentialOwner }> {
      const tokenHash = mfaTokenHash(mfaToken);
      const challenge = tokenHash === undefined ? undefined : await store.findMfaChallenge(tokenHash);
      const found = challenge === undefined ? undefined : await store.findOrganizationById(challenge.orgId);
      const member = found === undefined || challenge?.memberId === undefined ? undefined : await store.findMember(found.id, challenge.memberId);
      const org = found === undefined || (challenge?.memberId !== undefined && member === undefined) ? undefined : credentialOwner(found, member);
      // Bound to the password check that made it: a password changed since spends it.
      if (tokenHash === undefined || challenge === undefined || org === undefined || passwordCheckOf(org.passwordHash) !== challenge.passwordCheck) throw invalidMfaToken();
      return { tokenHash, challenge, org };
    },

    /**
     * The second step: a right code (or an unused recovery code) uses the challenge and opens the
     * session. A wrong one counts against the challenge (the fifth spends it): mfaCodeWrong.
     */
    async finishLogin(found: { tokenHash: string; challenge: MfaChallenge; org: CredentialOwner }, input: SecondFactorInput, client: LoginClient): Promise<{ token: string; used: SecondFactorUsed }> {
      const { tokenHash, challenge, org } = found;
      const memberId = org.memberId;
      const [factor, kept] = await Promise.all([store.findTotp(org.id, memberId), store.listPasskeys(org.id, memberId)]);
      // Every factor removed since the password was checked: nothing can finish this login.
      if (factor?.active !== true && kept.length === 0) throw invalidMfaToken();
      // Counted against the organization before it is judged (guards/second-factor-bound.ts).
      const { right, used } = await judged(org.id, () => judge(org.id, factor, kept, input, challenge.passkeyChallenge, memberId), memberId);
      if (!right) {
        const failures = await store.failMfaChallenge(tokenHash, MFA_TOKEN_MAX_FAILURES);
        if (failures === 0 || failures >= MFA_TOKEN_MAX_FAILURES) throw invalidMfaToken('Too many wrong codes: this mfaToken is spent; log in again.');
        throw new Problem('mfaCodeWrong', `The ${used === 'passkey' ? 'passkey\'s answer did not verify' : 'code is not right'} (or was used already). ${MFA_TOKEN_MAX_FAILURES - failures} more tries with this mfaToken.`, 'bad_code');
      }
      // Single use: of two racing finishes with one mfaToken, one session.
      if (!(await store.consumeMfaChallenge(tokenHash))) throw invalidMfaToken();
      return { token: await sessions.open(org.id, client, memberId), used };
    },

    async status(orgId: string, memberId?: string): Promise<MfaStatus> {
      const [factor, kept] = await Promise.all([store.findTotp(orgId, memberId), store.listPasskeys(orgId, memberId)]);
      const enabled = factor?.active === true;
      const any = enabled || kept.length > 0;
      return {
        methods: methodsOf(enabled, kept.length > 0),
        totp: { enabled, pending: factor !== undefined && !factor.active },
        recoveryCodesLeft: any ? await store.countRecoveryCodes(orgId, memberId) : 0,
        passkeys: kept.map(viewOf),
      };
    },

    /** A new pending secret (the password was checked by the caller); the factor is not active yet. */
    async beginTotp(org: CredentialOwner): Promise<{ secret: string; otpauthUri: string }> {
      const secret = new OTPAuth.Secret({ size: 20 }).base32;
      const outcome = await store.beginTotp(org.id, box.seal(sealedFor(org.id, org.memberId), secret), org.memberId);
      if (outcome === undefined) throw new Problem('organizationNotFound');
      if (outcome === 'active') throw new Problem('totpAlreadyEnabled', 'TOTP is already enabled: remove it first (DELETE /auth/mfa/totp).');
      return { secret, otpauthUri: totpOf(org.id, secret, org.email).toString() };
    },

    /**
     * The first right code activates the pending factor: the recovery codes, shown this once,
     * when it is the organization's first factor (undefined beside a passkey: the codes stay).
     */
    async confirmTotp(orgId: string, code: string, memberId?: string): Promise<string[] | undefined> {
      const factor = await store.findTotp(orgId, memberId);
      if (factor === undefined || factor.active) throw new Problem('totpNotPending', factor === undefined ? 'Start with POST /auth/mfa/totp.' : 'TOTP is already enabled.');
      const step = stepOf(orgId, factor, code, memberId);
      if (step === undefined) throw new Problem('mfaCodeRejected', 'The code is not right: check the device\'s clock and the secret entered.', 'bad_code');
      const { codes, hashes } = await storeRecoveryCodes(orgId);
      // The enrolment code's step is used: it cannot be the first login's code too.
      const outcome = await store.activateTotp(orgId, factor.secret, step, hashes, memberId);
      if (outcome === false) throw new Problem('totpNotPending', 'The enrolment changed meanwhile; start again.');
      return outcome === 'first' ? codes : undefined;
    },

    /**
     * Removes TOTP with a right code of it (the password was checked by the caller). The code is
     * judged under the organization's bound, as a login's is (issue 45): 1119 when wrong.
     */
    async disableTotp(orgId: string, code: string, memberId?: string): Promise<void> {
      const factor = await activeFactor(orgId, memberId);
      const { right } = await judged(orgId, async () => ({ right: await useCode(orgId, factor, code, memberId) }), memberId);
      if (!right) throw new Problem('mfaCodeRejected', 'The code is not right (or was used already).', 'bad_code');
      await store.removeTotp(orgId, memberId);
    },

    /**
     * The passkey options of a step-up (issue 45): its challenge kept for `sessionId`'s next
     * authenticator change (5 minutes, single use, a new call replaces it); undefined without a passkey.
     */
    async stepUpOptions(org: CredentialOwner, sessionId: string): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
      const options = await passkeys.loginOptions(org.id, org.memberId);
      if (options === undefined) return undefined;
      await store.createMfaChallenge(stepUpKey(org.id, sessionId), {
        orgId: org.id,
        passwordCheck: passwordCheckOf(org.passwordHash),
        expiresAt: now() + MFA_TOKEN_TTL_SECONDS * 1000,
        passkeyChallenge: options.challenge,
      });
      return options;
    },

    /**
     * The step-up of an authenticator change (issue 45): with no factor enrolled, nothing to prove
     * ('none': the password was enough, as before). With one, a TOTP code, a recovery code or a
     * passkey assertion over the session's step-up options must prove it, judged under the
     * organization's bound: 1123 when none is given, 1119 (1120 for a passkey) when wrong.
     * Answers what proved it (a recovery code is used up).
     */
    async proveSecondFactor(orgId: string, sessionId: string, input: SecondFactorInput, memberId?: string): Promise<SecondFactorUsed | 'none'> {
      const [factor, kept] = await Promise.all([store.findTotp(orgId, memberId), store.listPasskeys(orgId, memberId)]);
      if (factor?.active !== true && kept.length === 0) return 'none';
      if (input.code === undefined && input.recoveryCode === undefined && input.passkey === undefined) {
        throw new Problem('secondFactorRequired', 'This organization has a second factor: prove it with `code` (the authenticator app\'s current code), `recoveryCode`, or `passkey` (an assertion over the options of POST /auth/mfa/step-up).', 'second_factor_required');
      }
      // A passkey answers the session's step-up challenge, used once whatever the outcome.
      const key = stepUpKey(orgId, sessionId);
      const passkeyChallenge = input.passkey === undefined ? undefined : (await store.findMfaChallenge(key))?.passkeyChallenge;
      if (input.passkey !== undefined && (passkeyChallenge === undefined || !(await store.consumeMfaChallenge(key)))) {
        throw new Problem('passkeyRejected', 'No step-up is pending for this session (or it expired): ask POST /auth/mfa/step-up for passkeyOptions first.', 'no_step_up');
      }
      const { right, used } = await judged(orgId, () => judge(orgId, factor, kept, input, passkeyChallenge, memberId), memberId);
      if (!right && used === 'passkey') throw new Problem('passkeyRejected', 'The passkey\'s answer did not verify.', 'bad_passkey');
      if (!right) throw new Problem('mfaCodeRejected', `The ${used === 'recovery_code' ? 'recovery code' : 'code'} is not right (or was used already).`, 'bad_code');
      return used;
    },

    /** New recovery codes; the old ones die. */
    async regenerateRecoveryCodes(orgId: string, memberId?: string): Promise<string[]> {
      const { codes, hashes } = await storeRecoveryCodes(orgId);
      // While any factor (TOTP or a passkey) is active; 1227 kept for none, as before passkeys.
      if (!(await store.replaceRecoveryCodes(orgId, hashes, memberId))) throw new Problem('totpNotEnabled', 'No second factor is enabled: recovery codes come with the first (TOTP or a passkey).');
      return codes;
    },

    /** organizationNotFound unless it exists (the admin API's reads). */
    async requireOrganization(orgId: string): Promise<void> {
      if ((await store.findOrganizationById(orgId)) === undefined) throw new Problem('organizationNotFound');
    },

    /** The operator's removal (admin API): every factor (TOTP, passkeys, recovery codes) goes and every login session ends (a member's: its own). */
    async removeByOperator(orgId: string, memberId?: string): Promise<{ removed: boolean; sessionsEnded: number }> {
      if ((await store.findOrganizationById(orgId)) === undefined) throw new Problem('organizationNotFound');
      const other = otherMemberId(orgId, memberId);
      if (memberId !== undefined && (await store.findMember(orgId, memberId)) === undefined) throw new Problem('memberNotFound');
      const removed = await store.removeSecondFactors(orgId, other);
      if (!removed) return { removed, sessionsEnded: 0 };
      return { removed, sessionsEnded: other === undefined ? await sessions.endAll(orgId) : await endMemberSessions({ store, bus: deps.bus }, orgId, other) };
    },
  };
}

/** Where a session's step-up challenge is kept: with the mfaTokens' challenges, on the organization's shard, never the session id itself. */
function stepUpKey(orgId: string, sessionId: string): string {
  return tagged(shardTagOf(orgId), sha256Base64url(`authgate-step-up:${sessionId}`));
}

function invalidMfaToken(detail = 'The mfaToken is not valid: it may have been used, spent by wrong codes, or have expired. Log in again.'): Problem {
  return new Problem('mfaTokenInvalid', detail, 'mfa_token_invalid');
}

export type MfaService = ReturnType<typeof createMfaService>;
