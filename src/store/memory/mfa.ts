/** The memory store's TOTP factors, recovery codes and login challenges (store/mfa.ts MfaStore). */
import type { MfaChallenge, MfaStore } from '../mfa.js';
import type { MemoryPart, MemoryState } from './state.js';

/** Whether the organization has an active factor (TOTP or a passkey): its recovery codes then work. */
export function hasActiveFactor(state: MemoryState, orgId: string): boolean {
  return state.totpByOrg.get(orgId)?.active === true || (state.passkeysByOrg.get(orgId)?.size ?? 0) > 0;
}

export function memoryMfa(state: MemoryState): MemoryPart<MfaStore> {
  const { now, orgsById, totpByOrg, recoveryCodesByOrg } = state;
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
      async findTotp(orgId) {
        const factor = totpByOrg.get(orgId);
        if (factor === undefined) return undefined;
        return { secret: factor.secret, active: factor.active, lastStep: factor.lastStep, recoveryCodesLeft: recoveryCodesByOrg.get(orgId)?.size ?? 0 };
      },
      async beginTotp(orgId, secret) {
        if (!orgsById.has(orgId)) return undefined;
        const factor = totpByOrg.get(orgId);
        if (factor?.active === true) return 'active';
        // The last used step survives a new enrolment: a code once accepted stays refused.
        totpByOrg.set(orgId, { secret, active: false, lastStep: factor?.lastStep ?? 0 });
        return 'pending';
      },
      async activateTotp(orgId, secret, step, recoveryCodeHashes) {
        const factor = totpByOrg.get(orgId);
        if (factor === undefined || factor.active || factor.secret !== secret || step <= factor.lastStep) return false;
        const first = !hasActiveFactor(state, orgId);
        totpByOrg.set(orgId, { secret, active: true, lastStep: step });
        if (first) recoveryCodesByOrg.set(orgId, new Set(recoveryCodeHashes));
        return first ? 'first' : 'added';
      },
      async useTotpStep(orgId, step) {
        const factor = totpByOrg.get(orgId);
        if (factor === undefined || !factor.active || step <= factor.lastStep) return false;
        factor.lastStep = step;
        return true;
      },
      async countRecoveryCodes(orgId) {
        return recoveryCodesByOrg.get(orgId)?.size ?? 0;
      },
      async useRecoveryCode(orgId, codeHash) {
        if (!hasActiveFactor(state, orgId)) return false;
        return recoveryCodesByOrg.get(orgId)?.delete(codeHash) ?? false;
      },
      async replaceRecoveryCodes(orgId, codeHashes) {
        if (!hasActiveFactor(state, orgId)) return false;
        recoveryCodesByOrg.set(orgId, new Set(codeHashes));
        return true;
      },
      async removeTotp(orgId) {
        const had = totpByOrg.delete(orgId);
        if (!hasActiveFactor(state, orgId)) recoveryCodesByOrg.delete(orgId);
        return had;
      },
      async createMfaChallenge(tokenHash, challenge) {
        challenges.set(tokenHash, { ...challenge, failures: 0 });
      },
      async findMfaChallenge(tokenHash) {
        const found = liveChallenge(tokenHash);
        if (found === undefined) return undefined;
        const { orgId, passwordCheck, expiresAt, passkeyChallenge } = found;
        return { orgId, passwordCheck, expiresAt, ...(passkeyChallenge !== undefined && { passkeyChallenge }) };
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
