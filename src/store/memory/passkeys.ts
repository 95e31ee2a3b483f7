/** The memory store's passkeys and pending registrations (store/passkeys.ts PasskeyStore). */
import { MAX_PASSKEYS_PER_ORGANIZATION, type PasskeyStore } from '../passkeys.js';
import { hasActiveFactor } from './mfa.js';
import type { MemoryPart, MemoryState } from './state.js';
import { factorHolder, holderExists } from './factor-holders.js';

export function memoryPasskeys(state: MemoryState): MemoryPart<PasskeyStore> {
  const { now, totpByOrg, recoveryCodesByOrg, passkeysByOrg, passkeyRegistrations } = state;

  return {
    sweep: (t) => {
      for (const [holder, pending] of passkeyRegistrations) if (pending.expiresAt <= t) passkeyRegistrations.delete(holder);
    },
    methods: {
      async listPasskeys(orgId, memberId) {
        const key = factorHolder(orgId, memberId);
        return [...(passkeysByOrg.get(key)?.values() ?? [])];
      },
      async beginPasskeyRegistration(orgId, registration, memberId) {
        const key = factorHolder(orgId, memberId);
        passkeyRegistrations.set(key, registration);
      },
      async takePasskeyRegistration(orgId, memberId) {
        const key = factorHolder(orgId, memberId);
        const pending = passkeyRegistrations.get(key);
        passkeyRegistrations.delete(key);
        return pending === undefined || pending.expiresAt <= now() ? undefined : pending;
      },
      async addPasskey(orgId, passkey, recoveryCodeHashes, memberId) {
        if (!holderExists(state, orgId, memberId)) return undefined;
        const key = factorHolder(orgId, memberId);
        const kept = passkeysByOrg.get(key) ?? new Map();
        if (kept.has(passkey.id)) return 'duplicate';
        if (kept.size >= MAX_PASSKEYS_PER_ORGANIZATION) return 'limit';
        const first = !hasActiveFactor(state, key);
        kept.set(passkey.id, passkey);
        passkeysByOrg.set(key, kept);
        if (first) recoveryCodesByOrg.set(key, new Set(recoveryCodeHashes));
        return first ? 'first' : 'added';
      },
      async renamePasskey(orgId, id, name, memberId) {
        const key = factorHolder(orgId, memberId);
        const kept = passkeysByOrg.get(key);
        const found = kept?.get(id);
        if (kept === undefined || found === undefined) return undefined;
        const renamed = { ...found, name };
        kept.set(id, renamed);
        return renamed;
      },
      async removePasskey(orgId, id, memberId) {
        const key = factorHolder(orgId, memberId);
        const kept = passkeysByOrg.get(key);
        if (kept === undefined || !kept.delete(id)) return false;
        if (kept.size === 0) passkeysByOrg.delete(key);
        if (!hasActiveFactor(state, key)) recoveryCodesByOrg.delete(key);
        return true;
      },
      async usePasskey(orgId, id, counter, at, memberId) {
        const key = factorHolder(orgId, memberId);
        const kept = passkeysByOrg.get(key);
        const found = kept?.get(id);
        if (kept === undefined || found === undefined) return false;
        if ((counter > 0 || found.counter > 0) && counter <= found.counter) return false;
        kept.set(id, { ...found, counter, lastUsedAt: at });
        return true;
      },
      async removeSecondFactors(orgId, memberId) {
        const key = factorHolder(orgId, memberId);
        const had = totpByOrg.has(key) || passkeysByOrg.has(key);
        for (const factors of [totpByOrg, recoveryCodesByOrg, passkeysByOrg, passkeyRegistrations]) factors.delete(key);
        return had;
      },
    },
  };
}
