/**
 * E-mail claims (`<base>e:<email>` → organization id, under the e-mail's own shard tag): what keeps
 * e-mails unique across every shard, for sign-up (organizations.ts) and e-mail changes
 * (organization-profiles.ts). A claim counts only while the organization it names holds that
 * e-mail in its record; one that names a gone organization, or one whose record holds another
 * e-mail with no change of it in flight (the pending mark, claimEmail.lua), was left by a step cut
 * off halfway: it finds nothing, and the next claim of the e-mail releases it.
 */
import { shardTagOf } from '../shard-tag.js';
import type { Organization } from '../store.js';
import type { RedisStoreContext } from './context.js';
import { unexpected } from './replies.js';

/**
 * How long an e-mail change's claim is marked pending: far above the time one change takes (a
 * store method is bounded by the command timeout), so a change in flight is never taken for a
 * cut-off one; after it, a claim its organization never took up may be released.
 */
export const PENDING_CLAIM_MS = 60_000;

/** A member's claim of its e-mail (redis/members.ts): `m <org id> <member id>`. */
export function memberClaimHolder(orgId: string, memberId: string): string {
  return `m ${orgId} ${memberId}`;
}

export function parseMemberClaim(holder: string): { orgId: string; memberId: string } | undefined {
  const match = /^m (\S+) (\S+)$/.exec(holder);
  return match === null ? undefined : { orgId: match[1]!, memberId: match[2]! };
}

export function createEmailClaims(context: Pick<RedisStoreContext, 'client' | 'keys' | 'run' | 'readOrganization' | 'organizationPlace'>) {
  const { client, keys, run, readOrganization, organizationPlace } = context;
  const claimKey = (email: string) => keys.shard(shardTagOf(email)).emailClaim(email);
  const pendingKey = (email: string) => `${keys.shard(shardTagOf(email)).base}ep:${email}`;

  /** Whether the claim of `email` by `holder` is left over: released by the next claim. */
  async function leftOver(email: string, holder: string): Promise<boolean> {
    const member = parseMemberClaim(holder);
    if (member !== undefined) {
      const { shard, packed } = organizationPlace(member.orgId);
      const json: unknown = await client.hget(shard.organizationMembers(packed), member.memberId);
      return typeof json !== 'string' || (JSON.parse(json) as { e?: unknown }).e !== email;
    }
    const org = await readOrganization(holder);
    if (org === undefined) return true;
    if (org.email === email) return false;
    return (await client.exists(pendingKey(email))) === 0;
  }

  return {
    claimKey,

    /** The organization holding the e-mail: its claim's, only while its record holds that e-mail. */
    async find(email: string): Promise<Organization | undefined> {
      const orgId: unknown = await client.get(claimKey(email));
      if (orgId === null) return undefined;
      if (typeof orgId !== 'string') throw unexpected('findOrganizationByEmail');
      // A member's e-mail (redis/members.ts) is no organization's.
      if (parseMemberClaim(orgId) !== undefined) return undefined;
      const org = await readOrganization(orgId);
      return org !== undefined && org.email === email ? org : undefined;
    },

    /**
     * Claims the e-mail for orgId: true when it is orgId's. `pending`: an e-mail change's claim
     * (marked, claimEmail.lua); else a sign-up's (SET NX). A left-over claim is released (only
     * while it still names the same organization) and the claim tried again.
     */
    async claim(email: string, orgId: string, pending: boolean): Promise<boolean> {
      const key = claimKey(email);
      for (let attempt = 0; attempt < 3; attempt++) {
        const won = pending ? (await run.claimEmail([key, pendingKey(email)], [orgId, PENDING_CLAIM_MS])) === 1 : (await client.set(key, orgId, 'NX')) === 'OK';
        if (won) return true;
        const holder: unknown = await client.get(key);
        if (holder === null) continue;
        if (typeof holder !== 'string' || !(await leftOver(email, holder))) return false;
        await run.releaseEmail([key], [holder]);
      }
      return false;
    },

    /** The record holds the e-mail now: its claim's pending mark has done its job. */
    settled: async (email: string): Promise<void> => {
      await client.del(pendingKey(email));
    },

    /** Releases the claim only while it names orgId. */
    release: async (email: string, orgId: string): Promise<void> => {
      await run.releaseEmail([claimKey(email)], [orgId]);
    },
  };
}

export type EmailClaims = ReturnType<typeof createEmailClaims>;
