/** The memory store's second factors and their challenges (store/mfa.ts MfaStore). */
import type { MfaChallenge, MfaStore } from '../mfa.js';
import type { MemoryPart, MemoryState } from './state.js';

type Factor = { secret: string; active: boolean; lastStep: number; codes: Set<string> };

export function memoryMfa(state: MemoryState): MemoryPart<MfaStore> {
  const { now, orgsById } = state;
  const factors = new Map<string, Factor>();
  const challenges = new Map<string, MfaChallenge & { failures: number }>();

  /** The factor of a live organization (a deleted organization's is dropped here). */
  function factorOf(orgId: string): Factor | undefined {
    if (!orgsById.has(orgId)) {
      factors.delete(orgId);
      return undefined;
    }
    return factors.get(orgId);
  }

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
      for (const orgId of factors.keys()) if (!orgsById.has(orgId)) factors.delete(orgId);
    },
    methods: {
      async findTotp(orgId) {
        const factor = factorOf(orgId);
        if (factor === undefined) return undefined;
        return { secret: factor.secret, active: factor.active, lastStep: factor.lastStep, recoveryCodesLeft: factor.codes.size };
      },
      async beginTotp(orgId, secret) {
        if (!orgsById.has(orgId)) return undefined;
        const factor = factorOf(orgId);
        if (factor?.active === true) return 'active';
        factors.set(orgId, { secret, active: false, lastStep: factor?.lastStep ?? 0, codes: new Set() });
        return 'pending';
      },
      async activateTotp(orgId, secret, step, recoveryCodeHashes) {
        const factor = factorOf(orgId);
        if (factor === undefined || factor.active || factor.secret !== secret || step <= factor.lastStep) return false;
        factors.set(orgId, { secret, active: true, lastStep: step, codes: new Set(recoveryCodeHashes) });
        return true;
      },
      async useTotpStep(orgId, step) {
        const factor = factorOf(orgId);
        if (factor === undefined || !factor.active || step <= factor.lastStep) return false;
        factor.lastStep = step;
        return true;
      },
      async useRecoveryCode(orgId, codeHash) {
        const factor = factorOf(orgId);
        if (factor === undefined || !factor.active) return false;
        return factor.codes.delete(codeHash);
      },
      async replaceRecoveryCodes(orgId, codeHashes) {
        const factor = factorOf(orgId);
        if (factor === undefined || !factor.active) return false;
        factor.codes = new Set(codeHashes);
        return true;
      },
      async removeTotp(orgId) {
        const had = factorOf(orgId) !== undefined;
        factors.delete(orgId);
        return had;
      },
      async createMfaChallenge(tokenHash, challenge) {
        challenges.set(tokenHash, { ...challenge, failures: 0 });
      },
      async findMfaChallenge(tokenHash) {
        const found = liveChallenge(tokenHash);
        return found === undefined ? undefined : { orgId: found.orgId, passwordCheck: found.passwordCheck, expiresAt: found.expiresAt };
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
