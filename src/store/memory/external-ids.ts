/** The memory store's external ids (store/external-ids.ts): two maps, changed in one synchronous step. */
import type { ExternalIdStore } from '../external-ids.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memoryExternalIds(state: MemoryState): MemoryPart<ExternalIdStore> {
  const { orgsById, externalIdsByOrg, orgIdByExternalId } = state;
  const claim = (issuer: string, externalId: string) => `${issuer}\n${externalId}`;
  return {
    methods: {
      async setExternalIds(orgId, change) {
        if (!orgsById.has(orgId)) return 'not-found';
        for (const [issuer, externalId] of Object.entries(change)) {
          const holder = externalId === null ? undefined : orgIdByExternalId.get(claim(issuer, externalId));
          if (holder !== undefined && holder !== orgId) return { takenAt: issuer };
        }
        const own = new Map(Object.entries(externalIdsByOrg.get(orgId) ?? {}));
        for (const [issuer, externalId] of Object.entries(change)) {
          const before = own.get(issuer);
          if (before !== undefined) orgIdByExternalId.delete(claim(issuer, before));
          if (externalId === null) own.delete(issuer);
          else {
            own.set(issuer, externalId);
            orgIdByExternalId.set(claim(issuer, externalId), orgId);
          }
        }
        const after = Object.fromEntries(own);
        if (own.size === 0) externalIdsByOrg.delete(orgId);
        else externalIdsByOrg.set(orgId, after);
        return after;
      },

      async readExternalIds(orgId) {
        return externalIdsByOrg.get(orgId) ?? {};
      },

      async findOrganizationIdByExternalId(issuer, externalId) {
        return orgIdByExternalId.get(claim(issuer, externalId));
      },
    },
  };
}

/** Deleting the organization drops its claims (memory/organizations.ts calls it in the same step). */
export function dropExternalIds(state: MemoryState, orgId: string): void {
  for (const [issuer, externalId] of Object.entries(state.externalIdsByOrg.get(orgId) ?? {})) state.orgIdByExternalId.delete(`${issuer}\n${externalId}`);
  state.externalIdsByOrg.delete(orgId);
}
