/** The memory store's TOTP factors, recovery codes and login challenges (store/mfa.ts MfaStore). */
import type { MfaChallenge, MfaStore } from '../mfa.js';
import type { MemoryPart, MemoryState } from './state.js';
import { factorHolder, holderExists } from './factor-holders.js';

/** Whether the holder (memory/factor-holders.ts) has an active factor (TOTP or a passkey): its recovery codes then work. */
export function hasActiveFactor(state: MemoryState, holder: string): boolean {
  return state.totpByOrg.get(holder)?.active === true || (state.passkeysByOrg.get(holder)?.size ?? 0) > 0;
}

export function memoryMfa(state: MemoryState): MemoryPart<MfaStore> {
  const { now, totpByOrg, recoveryCodesByOrg } = state;
  const challenges = new Map<string, MfaChallenge & { failures: number }>();

  function liveChallenge(tokenHash: string) {
    const found = challenges.get(tokenHash);
    if (found === undefined) return undefined;
    if (found.expiresAt <= now()) {
      challenges.delete(tokenHash);
      return undefined;
    }
    return found;
  }

  return {
    sweep: (t) => {
      for (const [hash, challenge] of challenges) if (challenge.expiresAt <= t) challenges.delete(hash);
    },
    methods: {
      async findTotp(orgId, memberId) {
        const key = factorHolder(orgId, memberId);
        const factor = totpByOrg.get(key);
        if (factor === undefined) return undefined;
        return { secret: factor.secret, active: factor.active, lastStep: factor.lastStep, recoveryCodesLeft: recoveryCodesByOrg.get(key)?.size ?? 0 };
      },
      async beginTotp(orgId, secret, memberId) {
        if (!holderExists(state, orgId, memberId)) return undefined;
        const key = factorHolder(orgId, memberId);
        const factor = totpByOrg.get(key);
        if (factor?.active === true) return 'active';
        // The last used step survives a new enrolment: a code once accepted stays refused.
        totpByOrg.set(key, { secret, active: false, lastStep: factor?.lastStep ?? 0 });
        return 'pending';
      },
      async activateTotp(orgId, secret, step, recoveryCodeHashes, memberId) {
        const key = factorHolder(orgId, memberId);
        const factor = totpByOrg.get(key);
        if (factor === undefined || factor.active || factor.secret !== secret || step <= factor.lastStep) return false;
        const first = !hasActiveFactor(state, key);
        totpByOrg.set(key, { secret, active: true, lastStep: step });
        if (first) recoveryCodesByOrg.set(key, new Set(recoveryCodeHashes));
        return first ? 'first' : 'added';
      },
      async useTotpStep(orgId, step, memberId) {
        const key = factorHolder(orgId, memberId);
        const factor = totpByOrg.get(key);
        if (factor === undefined || !factor.active || step <= factor.lastStep) return false;
        factor.lastStep = step;
        return true;
      },
      async countRecoveryCodes(orgId, memberId) {
        const key = factorHolder(orgId, memberId);
        return recoveryCodesByOrg.get(key)?.size ?? 0;
      },
      async useRecoveryCode(orgId, codeHash, memberId) {
        const key = factorHolder(orgId, memberId);
        if (!hasActiveFactor(state, key)) return false;
        return recoveryCodesByOrg.get(key)?.delete(codeHash) ?? false;
      },
      async replaceRecoveryCodes(orgId, codeHashes, memberId) {
        const key = factorHolder(orgId, memberId);
        if (!hasActiveFactor(state, key)) return false;
        recoveryCodesByOrg.set(key, new Set(codeHashes));
        return true;
      },
      async removeTotp(orgId, memberId) {
        const key = factorHolder(orgId, memberId);
        const had = totpByOrg.delete(key);
        if (!hasActiveFactor(state, key)) recoveryCodesByOrg.delete(key);
        return had;
      },
      async createMfaChallenge(tokenHash, challenge) {
        challenges.set(tokenHash, { ...challenge, failures: 0 });
      },
      async findMfaChallenge(tokenHash) {
        const found = liveChallenge(tokenHash);
        if (found === undefined) return undefined;
        const { orgId, memberId, passwordCheck, expiresAt, passkeyChallenge } = found;
        return { orgId, ...(memberId !== undefined && { memberId }), passwordCheck, expiresAt, ...(passkeyChallenge !== undefined && { passkeyChallenge }) };
      },
      async failMfaChallenge(tokenHash, limit) {
        const found = liveChallenge(tokenHash);
        if (found === undefined) return 0;
        found.failures += 1;
        if (found.failures >= limit) challenges.delete(tokenHash);
        return found.failures;
      },
      async consumeMfaChallenge(tokenHash) {
        const found = liveChallenge(tokenHash);
        return found !== undefined && challenges.delete(tokenHash);
      },
    },
  };
}
