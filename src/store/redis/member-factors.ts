/**
 * Where the Redis store keeps a second factor (issue 50): the organization's own (its first
 * member's) under its record's keys exactly as before members (keys.ts organizationTotp, …);
 * another member's beside them, each key suffixed `:<member id>` (`…o:<org>:f:mem_…`), on the
 * same shard, so the member's steps and its removal stay one script each. `members` and
 * `memberId` let a script refuse to store a factor for a member that is gone ('' for the first).
 */
import { otherMemberId } from '../members.js';
import type { RedisStoreContext } from './context.js';

export type FactorKeys = Readonly<{
  totp: string;
  codes: string;
  passkeys: string;
  registration: string;
  /** The organization's members hash: the script checks the member's field in it. */
  members: string;
  /** The member id to check for, '' for the organization's own factor. */
  memberId: string;
}>;

export function factorKeysOf(context: Pick<RedisStoreContext, 'organizationPlace'>, orgId: string, memberId?: string): FactorKeys {
  const { shard, packed } = context.organizationPlace(orgId);
  const other = otherMemberId(orgId, memberId);
  const suffix = other === undefined ? '' : `:${other}`;
  return {
    totp: shard.organizationTotp(packed) + suffix,
    codes: shard.organizationRecoveryCodes(packed) + suffix,
    passkeys: shard.organizationPasskeys(packed) + suffix,
    registration: shard.organizationPasskeyRegistration(packed) + suffix,
    members: shard.organizationMembers(packed),
    memberId: other ?? '',
  };
}

/** Every key of a member's second factor, as a removal deletes them. */
export function allFactorKeys(keys: FactorKeys): string[] {
  return [keys.totp, keys.codes, keys.passkeys, keys.registration];
}

/** Every other member's second-factor keys of an organization (its deletion deletes them). */
export async function otherMembersFactorKeys(context: Pick<RedisStoreContext, 'organizationPlace' | 'client'>, orgId: string): Promise<string[]> {
  const ids: string[] = await context.client.hkeys(factorKeysOf(context, orgId).members);
  return ids.flatMap((id) => (otherMemberId(orgId, id) === undefined ? [] : allFactorKeys(factorKeysOf(context, orgId, id))));
}
