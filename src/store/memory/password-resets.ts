/** The memory store's passwords and reset tokens (store/password-resets.ts PasswordResetStore). */
import type { PasswordResetStore } from '../password-resets.js';
import { restAfterOrganizationTag, shardTagIn } from '../shard-tag.js';
import type { Revoked } from '../store.js';
import type { MemoryPart, MemoryState } from './state.js';
import { holderExists, holderParts } from './factor-holders.js';

export function memoryPasswordResets(state: MemoryState): MemoryPart<PasswordResetStore> {
  const { now, orgsById, sessions, sessionIdsByOrg, resetsByOrg } = state;

  /** Every session of the organization, as deleteAllSessions ends them; the organization exists. */
  function endSessions(orgId: string): Revoked[] {
    const index = sessionIdsByOrg.get(orgId);
    const revoked: Revoked[] = [];
    for (const id of index ?? []) {
      sessions.delete(id);
      revoked.push({ kind: 'session', cacheKey: id });
    }
    index?.clear();
    return revoked;
  }

  function setHash(orgId: string, passwordHash: string): boolean {
    const org = orgsById.get(orgId);
    if (org === undefined) return false;
    orgsById.set(orgId, { ...org, passwordHash });
    return true;
  }

  /**
   * The organization (and member, for another member's: memory/factor-holders.ts) whose live reset
   * this is: a scan of the live resets (few at any time, swept when expired).
   */
  function liveReset(tokenHash: string): { orgId: string; expiresAt: number; memberId?: string } | undefined {
    if (shardTagIn(tokenHash) === undefined) return undefined;
    for (const [holder, reset] of resetsByOrg) {
      if (reset.tokenHash !== tokenHash) continue;
      const { orgId, memberId } = holderParts(holder);
      if (reset.expiresAt <= now() || !holderExists(state, orgId, memberId)) return undefined;
      return { orgId, expiresAt: reset.expiresAt, ...(memberId !== undefined && { memberId }) };
    }
    return undefined;
  }

  return {
    sweep: (t) => {
      for (const [holder, reset] of resetsByOrg) if (reset.expiresAt <= t) resetsByOrg.delete(holder);
    },
    methods: {
      async replacePassword(orgId, passwordHash) {
        if (!setHash(orgId, passwordHash)) return undefined;
        return endSessions(orgId);
      },

      async createPasswordReset(reset) {
        // As the Redis store: a reset is found on the shard its hash names.
        restAfterOrganizationTag(reset.tokenHash, reset.orgId, 'a reset token hash');
        if (!orgsById.has(reset.orgId)) return undefined;
        resetsByOrg.set(reset.orgId, { tokenHash: reset.tokenHash, expiresAt: reset.expiresAt });
        return endSessions(reset.orgId);
      },

      async findPasswordReset(tokenHash) {
        return liveReset(tokenHash);
      },

      async consumePasswordReset(orgId, tokenHash, passwordHash) {
        const live = liveReset(tokenHash);
        if (live === undefined || live.orgId !== orgId || live.memberId !== undefined) return undefined;
        resetsByOrg.delete(orgId);
        setHash(orgId, passwordHash);
        return endSessions(orgId);
      },
    },
  };
}
