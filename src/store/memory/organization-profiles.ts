/** The memory store's profile changes (store/organization-profiles.ts OrganizationProfileStore). */
import type { OrganizationProfileStore } from '../organization-profiles.js';
import type { Revoked } from '../store.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memoryOrganizationProfiles(state: MemoryState): MemoryPart<OrganizationProfileStore> {
  const { orgsById, orgIdByEmail, sessions, sessionIdsByOrg } = state;
  return {
    methods: {
      // Synchronous from start to end: atomic here, so the claim order of the Redis store is moot.
      async changeOrganizationProfile(orgId, change) {
        const org = orgsById.get(orgId);
        if (org === undefined) return undefined;
        const email = change.email ?? org.email;
        const emailChanged = email !== org.email;
        if (emailChanged && (orgIdByEmail.has(email) || state.members.memberByEmail.has(email))) return 'email-taken';
        const revoked: Revoked[] = [{ kind: 'profile', cacheKey: orgId }];
        if (emailChanged) {
          const index = sessionIdsByOrg.get(orgId);
          for (const id of [...(index ?? [])]) {
            if (id === change.keepSessionId) continue;
            sessions.delete(id);
            index?.delete(id);
            revoked.push({ kind: 'session', cacheKey: id });
          }
          orgIdByEmail.set(email, orgId);
          orgIdByEmail.delete(org.email);
        }
        const changed = { ...org, name: change.name ?? org.name, email };
        orgsById.set(orgId, changed);
        return { organization: changed, previous: { name: org.name, email: org.email }, revoked };
      },
    },
  };
}
