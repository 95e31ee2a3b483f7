/** The memory store's members' own passwords and resets (store/member-passwords.ts MemberPasswordStore). */
import type { MemberPasswordStore } from '../member-passwords.js';
import { restAfterOrganizationTag } from '../shard-tag.js';
import { factorHolder, holderExists } from './factor-holders.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memoryMemberPasswords(state: MemoryState): MemoryPart<MemberPasswordStore> {
  const { now, resetsByOrg, members } = state;

  /** Sets the (non-first) member's hash; false when there is no such member. */
  function setHash(orgId: string, memberId: string, passwordHash: string): boolean {
    const byId = members.membersByOrg.get(orgId);
    const member = byId?.get(memberId);
    if (byId === undefined || member === undefined) return false;
    byId.set(memberId, { ...member, passwordHash });
    return true;
  }

  return {
    methods: {
      async setMemberPassword(orgId, memberId, passwordHash) {
        if (!setHash(orgId, memberId, passwordHash)) return false;
        resetsByOrg.delete(factorHolder(orgId, memberId));
        return true;
      },

      async createMemberPasswordReset(reset) {
        // As the Redis store: a reset is found on the shard its hash names.
        restAfterOrganizationTag(reset.tokenHash, reset.orgId, 'a reset token hash');
        if (!holderExists(state, reset.orgId, reset.memberId) || factorHolder(reset.orgId, reset.memberId) === reset.orgId) return false;
        resetsByOrg.set(factorHolder(reset.orgId, reset.memberId), { tokenHash: reset.tokenHash, expiresAt: reset.expiresAt });
        return true;
      },

      async consumeMemberPasswordReset(orgId, memberId, tokenHash, passwordHash) {
        const holder = factorHolder(orgId, memberId);
        const live = resetsByOrg.get(holder);
        if (holder === orgId || live === undefined || live.tokenHash !== tokenHash || live.expiresAt <= now()) return false;
        if (!setHash(orgId, memberId, passwordHash)) return false;
        resetsByOrg.delete(holder);
        return true;
      },
    },
  };
}
