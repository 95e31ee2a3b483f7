/** The memory store's organizations (store.ts OrganizationStore) and their listing. */
import { dropMemberHolders } from './factor-holders.js';
import { dropExternalIds } from './external-ids.js';
import type { NewOrganization, OrganizationStore, Revoked } from '../store.js';
import { listOrganizationsIn, type OrganizationListing } from '../organization-listing.js';
import type { MemoryPart, MemoryState } from './state.js';
import { dropMembersOf } from './members.js';

export function memoryOrganizations(state: MemoryState): MemoryPart<OrganizationStore & OrganizationListing> {
  const { orgsById, orgIdByEmail, keysByHash, keyHashesByOrg, lastUsedByKey, sessions, sessionIdsByOrg, keyLimits, resetsByOrg } = state;
  return {
    methods: {
      async createOrganizationIfEmailFree(org: NewOrganization) {
        // A member's e-mail is taken too (memory/members.ts): one e-mail, one person, store-wide.
        if (orgIdByEmail.has(org.email) || state.members.memberByEmail.has(org.email)) return 'email-taken';
        orgsById.set(org.id, org);
        orgIdByEmail.set(org.email, org.id);
        keyHashesByOrg.set(org.id, new Map());
        sessionIdsByOrg.set(org.id, new Set());
        return org;
      },

      async findOrganizationByEmail(email) {
        const id = orgIdByEmail.get(email);
        return id === undefined ? undefined : orgsById.get(id);
      },

      async findOrganizationById(orgId) {
        return orgsById.get(orgId);
      },

      /** With everything it owns: its keys, sessions and own limits (the other parts' state). */
      async deleteOrganization(orgId) {
        const org = orgsById.get(orgId);
        if (org === undefined) return undefined;
        const revoked: Revoked[] = [];
        for (const [keyId, hash] of keyHashesByOrg.get(orgId) ?? []) {
          keysByHash.delete(hash);
          lastUsedByKey.delete(keyId);
          revoked.push({ kind: 'api_key', cacheKey: hash });
        }
        for (const sessionId of sessionIdsByOrg.get(orgId) ?? []) {
          sessions.delete(sessionId);
          revoked.push({ kind: 'session', cacheKey: sessionId });
        }
        keyHashesByOrg.delete(orgId);
        sessionIdsByOrg.delete(orgId);
        orgIdByEmail.delete(org.email);
        orgsById.delete(orgId);
        dropMembersOf(state.members, orgId);
        keyLimits.delete(orgId);
        resetsByOrg.delete(orgId);
        dropExternalIds(state, orgId);
        // Its provider tokens (issue 49) are refused at once: they are cached by organization.
        revoked.push({ kind: 'organization', cacheKey: orgId });
        for (const factors of [state.totpByOrg, state.recoveryCodesByOrg, state.passkeysByOrg, state.passkeyRegistrations]) factors.delete(orgId);
        dropMemberHolders(state, orgId);
        return revoked;
      },

      // The organization listing (organization-listing.ts): a scan of the map, filtered and sorted.
      listOrganizations: async (query) => listOrganizationsIn(orgsById.values(), query),
    },
  };
}
