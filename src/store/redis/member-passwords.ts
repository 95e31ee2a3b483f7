/**
 * The Redis store's members' own passwords and resets (store/member-passwords.ts). The member's
 * hash is in its record in the organization's members hash (redis/members.ts); its live reset is
 * named by the record's `pr` (the token's digest) and kept, as an organization's, as a string by
 * that digest on the organization's shard (keys.ts passwordReset), `<packed org id> <expiresAt>
 * <member id>`: PasswordResetStore.findPasswordReset (redis/password-resets.ts) reads both kinds.
 */
import type { MemberPasswordStore } from '../member-passwords.js';
import { shardTagOf } from '../shard-tag.js';
import type { RedisStoreContext } from './context.js';
import { packId, packMs } from './packing.js';
import { unexpected } from './replies.js';

const flag = (reply: unknown, method: string): boolean => {
  if (reply !== 0 && reply !== 1) throw unexpected(method);
  return reply === 1;
};

export function redisMemberPasswords(context: RedisStoreContext): MemberPasswordStore {
  const { now, run, guard, durably, organizationPlace, organizationRecord, credentialPlace } = context;
  const membersKey = (orgId: string) => {
    const { shard, packed } = organizationPlace(orgId);
    return shard.organizationMembers(packed);
  };

  return {
    setMemberPassword: (orgId, memberId, passwordHash) =>
      guard('setMemberPassword', () => durably([organizationRecord(orgId)], async () =>
        flag(await run.setMemberPassword([membersKey(orgId)], [memberId, passwordHash]), 'setMemberPassword'))),

    createMemberPasswordReset: (reset) =>
      guard('createMemberPasswordReset', () => durably([organizationRecord(reset.orgId)], async () => {
        const place = credentialPlace(reset.tokenHash);
        if (place === undefined || place.tag !== shardTagOf(reset.orgId) || place.rest === '') throw new Error('a reset token hash carries its organization\'s shard tag');
        const ttlMs = Math.max(1, Math.ceil(reset.expiresAt - now()));
        const value = `${packId(reset.orgId)} ${packMs(reset.expiresAt)} ${reset.memberId}`;
        return flag(await run.createMemberPasswordReset([membersKey(reset.orgId), place.shard.passwordReset(place.rest)], [reset.memberId, value, ttlMs, place.rest]), 'createMemberPasswordReset');
      })),

    consumeMemberPasswordReset: (orgId, memberId, tokenHash, passwordHash) =>
      guard('consumeMemberPasswordReset', () => durably([organizationRecord(orgId)], async () => {
        const place = credentialPlace(tokenHash);
        // Another organization's tag cannot be its reset.
        if (place === undefined || place.tag !== shardTagOf(orgId) || place.rest === '') return false;
        const { packed } = organizationPlace(orgId);
        return flag(await run.consumeMemberPasswordReset([place.shard.passwordReset(place.rest), membersKey(orgId)], [packed, memberId, place.rest, passwordHash, now()]), 'consumeMemberPasswordReset');
      })),
  };
}
