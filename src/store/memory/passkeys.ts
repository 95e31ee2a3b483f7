/** The memory store's passkeys and pending registrations (store/passkeys.ts PasskeyStore). */
import { MAX_PASSKEYS_PER_ORGANIZATION, type PasskeyStore } from '../passkeys.js';
import { hasActiveFactor } from './mfa.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memoryPasskeys(state: MemoryState): MemoryPart<PasskeyStore> {
  const { now, orgsById, totpByOrg, recoveryCodesByOrg, passkeysByOrg, passkeyRegistrations } = state;

  return {
    sweep: (t) => {
      for (const [orgId, pending] of passkeyRegistrations) if (pending.expiresAt <= t) passkeyRegistrations.delete(orgId);
    },
    methods: {
      async listPasskeys(orgId) {
        return [...(passkeysByOrg.get(orgId)?.values() ?? [])];
      },
      async beginPasskeyRegistration(orgId, registration) {
        passkeyRegistrations.set(orgId, registration);
      },
      async takePasskeyRegistration(orgId) {
        const pending = passkeyRegistrations.get(orgId);
        passkeyRegistrations.delete(orgId);
        return pending === undefined || pending.expiresAt <= now() ? undefined : pending;
      },
      async addPasskey(orgId, passkey, recoveryCodeHashes) {
        if (!orgsById.has(orgId)) return undefined;
        const kept = passkeysByOrg.get(orgId) ?? new Map();
        if (kept.has(passkey.id)) return 'duplicate';
        if (kept.size >= MAX_PASSKEYS_PER_ORGANIZATION) return 'limit';
        const first = !hasActiveFactor(state, orgId);
        kept.set(passkey.id, passkey);
        passkeysByOrg.set(orgId, kept);
        if (first) recoveryCodesByOrg.set(orgId, new Set(recoveryCodeHashes));
        return first ? 'first' : 'added';
      },
      async renamePasskey(orgId, id, name) {
        const kept = passkeysByOrg.get(orgId);
        const found = kept?.get(id);
        if (kept === undefined || found === undefined) return undefined;
        const renamed = { ...found, name };
        kept.set(id, renamed);
        return renamed;
      },
      async removePasskey(orgId, id) {
        const kept = passkeysByOrg.get(orgId);
        if (kept === undefined || !kept.delete(id)) return false;
        if (kept.size === 0) passkeysByOrg.delete(orgId);
        if (!hasActiveFactor(state, orgId)) recoveryCodesByOrg.delete(orgId);
        return true;
      },
      async usePasskey(orgId, id, counter, at) {
        const kept = passkeysByOrg.get(orgId);
        const found = kept?.get(id);
        if (kept === undefined || found === undefined) return false;
        if ((counter > 0 || found.counter > 0) && counter <= found.counter) return false;
        kept.set(id, { ...found, counter, lastUsedAt: at });
        return true;
      },
      async removeSecondFactors(orgId) {
        const had = totpByOrg.has(orgId) || passkeysByOrg.has(orgId);
        for (const factors of [totpByOrg, recoveryCodesByOrg, passkeysByOrg, passkeyRegistrations]) factors.delete(orgId);
        return had;
      },
    },
  };
}
